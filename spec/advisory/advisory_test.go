package advisory

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		cve, version string
		want         Status
	}{
		// This machine's runc (Debian bookworm security build) carries the fix.
		{"CVE-2024-21626", "1.1.5+ds1-1+deb12u1", Fixed},
		{"CVE-2024-21626", "1.1.5+ds1-1+deb12u2", Fixed},
		{"CVE-2024-21626", "1.1.5+ds1-1~deb12u0", Vulnerable},
		{"CVE-2024-21626", "1.1.5+ds1", Unknown}, // the engine's Version field alone: a Debian repack, revision unknown
		{"CVE-2024-21626", "1.1.5+ds1-1", Unknown},
		{"CVE-2024-21626", "1.1.5", Vulnerable},
		{"CVE-2024-21626", "v1.1.11", Vulnerable},
		{"CVE-2024-21626", "1.1.12", Fixed},
		{"CVE-2024-21626", "1.2.0-rc.1", Fixed},
		{"CVE-2024-21626", "1.0.0-rc92", Unaffected},
		{"CVE-2024-21626", "1.1.7-0ubuntu1~22.04.2", Unknown},
		{"CVE-2024-21626", "1.1.11-1.el9", Unknown},
		{"CVE-2024-21626", "1.1.12-1.el9", Fixed},
		{"CVE-2024-21626", "1.1.11-r0", Unknown},
		{"CVE-2024-21626", "1.1.12-r2", Fixed},
		{"CVE-2024-21626", "1.1.10-1.fc39", Unknown},
		{"CVE-2024-21626", "garbage", Unknown},
		{"CVE-2019-5736", "1.0.0-rc6", Vulnerable},
		{"CVE-2019-5736", "1.0.0-rc7", Fixed},
		{"CVE-2019-5736", "1.1.5+ds1", Fixed},
		{"CVE-2024-29018", "20.10.24+dfsg1", Unknown},
		{"CVE-2024-29018", "20.10.24+dfsg1-1+deb12u1", Vulnerable},
		{"CVE-2024-29018", "25.0.3", Vulnerable},
		{"CVE-2024-29018", "25.0.4", Fixed},
		{"CVE-2024-29018", "23.0.11", Fixed},
		{"CVE-2024-29018", "24.0.7", Vulnerable},
		{"CVE-2024-29018", "26.1.0", Fixed},
		{"CVE-0000-0000", "1.0", Unknown},
	} {
		r := Check(tc.cve, tc.version)
		if r.Status != tc.want {
			t.Errorf("%s %s: %s (%s), want %s", tc.cve, tc.version, r.Status, r.Detail, tc.want)
		}
		if r.Status == Unknown && strings.Contains(tc.version, "+") && !strings.Contains(r.Detail, UnknownDistro) {
			t.Errorf("%s: detail %q lacks %q", tc.version, r.Detail, UnknownDistro)
		}
		if (r.Status == Fixed || r.Status == Vulnerable) && r.Source == "" {
			t.Errorf("%s %s: no source", tc.cve, tc.version)
		}
	}
}

func TestCheckKernel(t *testing.T) {
	for _, tc := range []struct {
		release, uname string
		want           Status
	}{
		{"6.18.44-fc-v1147", "#1 SMP PREEMPT_DYNAMIC @0", Fixed}, // this machine: an upstream build
		{"5.10.50", "", Vulnerable},
		{"5.10.0-28-amd64", "#1 SMP Debian 5.10.209-2 (2024-01-31)", Fixed},
		{"5.10.0-13-amd64", "#1 SMP Debian 5.10.92-1 (2022-01-18)", Vulnerable},
		{"5.10.0-13-amd64", "#1 SMP", Unknown},
		{"5.15.0-91-generic", "#101-Ubuntu SMP", Unknown},
		{"6.8.0-45-generic", "#45-Ubuntu SMP", Fixed}, // a vendor build of a base past the fix
		{"4.15.0-213-generic", "#224-Ubuntu SMP", Unaffected},
		{"5.14.0-362.8.1.el9_3.x86_64", "#1 SMP PREEMPT_DYNAMIC", Unknown},
		{"6.5.6-300.fc39.x86_64", "#1 SMP PREEMPT_DYNAMIC", Fixed},
		{"5.15.20-0-lts", "#1-Alpine SMP", Vulnerable},
		{"4.19.0", "", Unaffected},
	} {
		if r := CheckKernel("CVE-2022-0847", tc.release, tc.uname); r.Status != tc.want {
			t.Errorf("%s / %s: %s (%s), want %s", tc.release, tc.uname, r.Status, r.Detail, tc.want)
		}
	}
}

func TestParseBuild(t *testing.T) {
	for in, want := range map[string]Build{
		"1.1.5+ds1-1+deb12u1":      {Upstream: "1.1.5", Distro: "debian", Release: "deb12", Package: "1.1.5+ds1-1+deb12u1"},
		"1.6.20~ds1":               {Upstream: "1.6.20", Distro: "debian"},
		"1.1.7-0ubuntu1~22.04.2":   {Upstream: "1.1.7", Distro: "ubuntu", Release: "22.04", Package: "1.1.7-0ubuntu1~22.04.2"},
		"1.1.12-1.el9_3":           {Upstream: "1.1.12", Distro: "rhel", Release: "el9", Package: "1.1.12-1.el9_3"},
		"1.1.12-r2":                {Upstream: "1.1.12", Distro: "alpine", Package: "1.1.12-r2"},
		"v1.1.12":                  {Upstream: "1.1.12"},
		"1.0.0-rc.6":               {Upstream: "1.0.0-rc6"},
		"20.10.24+dfsg1-1+deb12u1": {Upstream: "20.10.24", Distro: "debian", Release: "deb12", Package: "20.10.24+dfsg1-1+deb12u1"},
	} {
		got := ParseBuild(in)
		want.Raw = in
		if got != want {
			t.Errorf("ParseBuild(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestComparePackage(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.1.5+ds1-1+deb12u1", "1.1.5+ds1-1", 1},
		{"1.1.5+ds1-1+deb12u1", "1.1.5+ds1-1+deb12u1", 0},
		{"1.0~rc1", "1.0", -1},
		{"1:0.9", "2.0", 1},
		{"1.1.10", "1.1.9", 1},
		{"1.1.7-0ubuntu1~22.04.2", "1.1.7-0ubuntu1~22.04.10", -1},
	} {
		if got := ComparePackage(tc.a, tc.b); got != tc.want {
			t.Errorf("ComparePackage(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestTableCitesSources: every entry says where its numbers come from.
func TestTableCitesSources(t *testing.T) {
	for _, c := range Table {
		if c.UpstreamSource == "" || c.Mainline == "" || c.Component == "" {
			t.Errorf("%s: incomplete upstream entry", c.ID)
		}
		for _, d := range c.Distro {
			if d.Source == "" || d.Checked == "" || d.Release == "" {
				t.Errorf("%s %s %s: incomplete distribution entry", c.ID, d.Distro, d.Release)
			}
		}
	}
}

func TestComponentVersion(t *testing.T) {
	for _, tc := range [][3]string{
		{"1.1.5+ds1", "1.1.5+ds1-1+deb12u1", "1.1.5+ds1-1+deb12u1"}, // this machine's engine
		{"1.1.12", "v1.1.12-0-g51d5e94", "1.1.12"},
		{"1.7.13", "7c3aca7a610df76212171d200ca3811ff6096eb8", "1.7.13"},
		{"", "abc", ""},
	} {
		if got := ComponentVersion(tc[0], tc[1]); got != tc[2] {
			t.Errorf("ComponentVersion(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		a, b string
		less bool
	}{
		{"1.0.0-rc6", "1.0.0-rc7", true},
		{"1.0.0-rc92", "1.0.0", true},
		{"1.0.0", "1.0.0-rc7", false},
		{"v1.1.11", "1.1.12", true},
		{"6.18.44-fc-v1147", "5.16.11", false},
		{"1.29.1+k3s1", "1.29.2", true},
	}
	for _, tt := range tests {
		if got := Less(tt.a, tt.b); got != tt.less {
			t.Errorf("%s < %s = %v, want %v", tt.a, tt.b, got, tt.less)
		}
	}
}
