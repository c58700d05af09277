package redact

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx", "OPENAI_API_KEY=[redacted]"},
		{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "AWS_SECRET_ACCESS_KEY=[redacted]"},
		{"sh -c 'curl -H \"Authorization: Bearer abcdef123456\" x'", "sh -c 'curl -H \"Authorization: Bearer [redacted]\" x'"},
		{"tcp://admin:hunter2@10.0.0.1:2376 refused", "tcp://[redacted]@10.0.0.1:2376 refused"},
		{"https://tok@example.test/x", "https://[redacted]@example.test/x"},
		{"mysql --password=hunter2 db", "mysql --password=[redacted] db"},
		{"login --token abc123", "login --token [redacted]"},
		{`{"db_password":"hun\"ter2","name":"x"}`, `{"db_password":"[redacted]","name":"x"}`},
		{"key ghp_abcdefghijklmnopqrstuvwxyz0123 in text", "key [redacted] in text"},
		{"AKIAABCDEFGHIJKLMNOP", "[redacted]"},
		{"OPENAI_API_KEY=${OPENAI_API_KEY}", "OPENAI_API_KEY=${OPENAI_API_KEY}"}, // a reference, not a value
		{"plain words stay: snapshot s1 of web", "plain words stay: snapshot s1 of web"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[redacted]"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(Bytes([]byte(tc.in))); got != tc.want {
			t.Errorf("Bytes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestArgs(t *testing.T) {
	got := Args([]string{"mysql", "--password", "hunter2", "-e", "select 1", "sk-abcdefghijklmnopqrstuv"})
	want := []string{"mysql", "--password", Mark, "-e", "select 1", Mark}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Args = %q, want %q", got, want)
	}
}

func TestCellAndMessage(t *testing.T) {
	for _, tc := range []struct {
		name, in, cell, msg string
	}{
		{"escape sequence", "a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`},
		{"fake row", "x\nID  NAME", `x\nID  NAME`, "x\nID  NAME"},
		{"bidi override", "ab\u202ecd", `ab\u202ecd`, `ab\u202ecd`},
		{"carriage return", "ok\rFAKE", `ok\rFAKE`, `ok\rFAKE`},
	} {
		if got := Cell(tc.in); got != tc.cell {
			t.Errorf("%s: Cell = %q, want %q", tc.name, got, tc.cell)
		}
		if got := Message(tc.in); got != tc.msg {
			t.Errorf("%s: Message = %q, want %q", tc.name, got, tc.msg)
		}
	}
	long := strings.Repeat("n", 100000)
	if got := Cell(long); len(got) > MaxCell+40 || !strings.Contains(got, "99800 more characters") {
		t.Errorf("Cell(100000 chars) = %d bytes ending %q", len(got), got[len(got)-30:])
	}
	if got := Message(long); len(got) > MaxMessage+40 {
		t.Errorf("Message(100000 chars) = %d bytes", len(got))
	}
}

func BenchmarkBytes(b *testing.B) {
	rec := []byte(strings.Repeat(`{"id":"docker:default/inspect-abc","name":"web","labels":{"com.docker.compose.project":"inspect-abc"}},`, 1000))
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		Bytes(rec)
	}
}
