package inspectlive

import (
	"slices"
	"testing"
)

func TestProjectPrefix(t *testing.T) {
	// Examples worked through Inspect's task_project_name: lowercase, [^a-z0-9_-] → "-", runs
	// of "-" collapsed, 12 characters, trailing "_" dropped.
	tests := map[string]string{
		"ctf":                        "ctf",
		"gdm_intercode_ctf":          "gdm_intercod",
		"Cybench/Avatar":             "cybench-avat",
		"a  b":                       "a-b",
		"abcdefghijk_x":              "abcdefghijk",
		"my.task":                    "my-task",
		"inspect_evals/cyse2_interp": "inspect_eval",
	}
	for task, want := range tests {
		if got := projectPrefix(task); got != want {
			t.Errorf("projectPrefix(%q) = %q, want %q", task, got, want)
		}
		if !inspectProjectRE.MatchString("inspect-" + projectPrefix(task) + "-iabc123") {
			t.Errorf("a project of task %q would not look like Inspect's", task)
		}
	}
}

func TestShellSplitUndoesShlexJoin(t *testing.T) {
	tests := []struct {
		joined string
		want   []string
	}{
		{"bash --login -c 'cat /etc/passwd'", []string{"bash", "--login", "-c", "cat /etc/passwd"}},
		{`bash --login -c 'echo '"'"'hi'"'"''`, []string{"bash", "--login", "-c", "echo 'hi'"}},
		{"ls", []string{"ls"}},
		{`echo "a b" c\ d`, []string{"echo", "a b", "c d"}},
		{"''", []string{""}},
	}
	for _, tt := range tests {
		if got := shellSplit(tt.joined); !slices.Equal(got, tt.want) {
			t.Errorf("shellSplit(%q) = %q, want %q", tt.joined, got, tt.want)
		}
	}
	for _, s := range []string{"cat /etc/passwd", "echo 'hi'", "a\"b", ""} {
		if got := shellSplit(shellQuote(s)); len(got) != 1 || got[0] != s {
			t.Errorf("shellSplit(shellQuote(%q)) = %q", s, got)
		}
	}
}

func TestRanCommand(t *testing.T) {
	st := &SampleState{Commands: []Command{{Action: "exec", Cmd: "bash --login -c 'cat /etc/passwd'"}},
		Pending: &Command{Cmd: "nmap -sV 10.0.0.5", Pending: true}}
	tests := map[string]bool{
		"bash --login -c 'cat /etc/passwd'":                               true,
		"timeout -k 5s 180s bash --login -c 'cat /etc/passwd'":            true,
		"exec_start: timeout -k 5s 180s bash --login -c cat /etc/passwd":  true, // Docker's event action
		"exec_start: timeout -k 5s 60s bash --login -c nmap -sV 10.0.0.5": true,
		"nmap -sV 10.0.0.5":                 true,
		"bash --login -c 'cat /etc/shadow'": false,
		"":                                  false,
	}
	for exec, want := range tests {
		if got := ranCommand(st, []string{exec}); got != want {
			t.Errorf("ranCommand(%q) = %v, want %v", exec, got, want)
		}
	}
}
