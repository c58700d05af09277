package config

import (
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

func TestParseRefusesWithFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"unknown theme", "read_only: true\ntheme: rainbow\n", `c.yaml:2: theme "rainbow" is not a theme`},
		{"second document", "theme: dark\n---\nread_only: true\n", "c.yaml:2: a second YAML document"},
		{"unknown key", "themes: dark\n", "line 1: field themes not found"},
	} {
		_, err := Parse("c.yaml", []byte(tc.raw))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseKeepsWhereKeysWereSet(t *testing.T) {
	c, err := Parse("c.yaml", []byte("theme: dark16\nkeys:\n  snapshot: S\n  tear_down: ctrl+d\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.At("keys.tear_down"); got != "c.yaml:4" {
		t.Errorf("At(keys.tear_down) = %q", got)
	}
	if got := c.At("keys.nothing"); got != "c.yaml" {
		t.Errorf("At(keys.nothing) = %q", got)
	}
	for _, ok := range []string{"", "auto", "none", "light256"} {
		if _, err := Parse("c.yaml", []byte("theme: \""+ok+"\"\n")); err != nil {
			t.Errorf("theme %q refused: %v", ok, err)
		}
	}
}

// The containment watch's threshold is a severity name, its hook an argv with a timeout; a bad
// severity is refused naming the file.
func TestWatchSection(t *testing.T) {
	c, err := Parse("rk.yaml", []byte("watch:\n  min_severity: HIGH\n  hook: [/usr/local/bin/page, --team, range]\n  hook_timeout: 3s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Watch.MinSeverity != catalog.SeverityHigh || len(c.Watch.Hook) != 3 || c.Watch.HookTimeout != 3*time.Second {
		t.Fatalf("watch %+v", c.Watch)
	}
	if _, err := Parse("rk.yaml", []byte("watch:\n  min_severity: loud\n")); err == nil || !strings.Contains(err.Error(), "rk.yaml") || !strings.Contains(err.Error(), "unknown severity") {
		t.Fatalf("bad severity: %v", err)
	}
}
