package verify

import (
	"strings"
	"testing"
)

func TestParseProfile(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"T0.H1.N2", "T0.H1.N2", ""},
		{"t0.h1.n2", "T0.H1.N2", ""},
		{"...N2", "T*.H*.N2", ""},
		{"N2", "T*.H*.N2", ""},
		{"H1.N2", "T*.H1.N2", ""},
		{"T0..N2", "T0.H*.N2", ""},
		{"", "", "empty profile"},
		{"N3", "", `"N3" is not an axis level`},
		{"X1", "", `"X1" is not an axis level`},
		{"N2.N1", "", "names axis N twice"},
		{"...", "", "names no axis"},
		{"T0H1", "", "is not an axis level"},
	} {
		p, err := ParseProfile(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case p.String() != tc.want:
			t.Errorf("%q: %s, want %s", tc.in, p, tc.want)
		}
	}
}

func TestWeaker(t *testing.T) {
	for _, tc := range []struct {
		measured, expected string
		weaker             bool
	}{
		{"N0", "N2", true}, {"N1", "N2", true}, {"N2", "N2", false}, {"N2", "N1", false},
		{"H0", "H1", true}, {"H1", "H2", true}, {"H3", "H1", false},
		{"T0", "T1", true}, {"T2", "T0", false},
		{"", "N2", false}, {"N0", "", false},
	} {
		if got := Weaker(tc.measured, tc.expected); got != tc.weaker {
			t.Errorf("Weaker(%q, %q) = %v", tc.measured, tc.expected, got)
		}
	}
}
