package advisory

// TableDate is when the table below was last checked against its sources. Add a CVE or a
// distribution build as one entry; every entry names where its numbers come from.
const TableDate = "2026-12-03"

// CVE is one vulnerability a verdict depends on: which upstream releases fix it and, for
// distribution builds that backport the fix without changing the upstream version, which
// package versions do.
type CVE struct {
	ID        string
	Component string // runc, docker, containerd, kernel
	// Upstream: releases before FirstAffected are not affected; Mainline and newer are fixed;
	// a release line listed in Backports is fixed from that point release on.
	FirstAffected, Mainline string
	Backports               []string
	UpstreamSource          string
	Distro                  []DistroFix
}

// DistroFix is a distribution's fixed package for one release line. Fixed "" records that the
// distribution published no fixed build as of Checked.
type DistroFix struct {
	Distro, Release string
	Fixed           string
	Checked         string
	Source          string
}

// Table is every CVE rangekeeper's version checks use.
var Table = []CVE{
	{ID: "CVE-2024-21626", Component: "runc", FirstAffected: "1.0.0-rc93", Mainline: "1.1.12",
		UpstreamSource: "https://github.com/opencontainers/runc/releases/tag/v1.1.12 (GHSA-xr7r-f8xq-vfvv)",
		Distro: []DistroFix{
			{Distro: "debian", Release: "deb12", Fixed: "1.1.5+ds1-1+deb12u1", Checked: "2026-12-03",
				Source: "Debian changelog of runc 1.1.5+ds1-1+deb12u1 (bookworm-security, 2024-02-02): \"CVE-2024-21626: several container breakouts due to internally leaked fds\" (DSA-5615-1)"},
		}},
	{ID: "CVE-2019-5736", Component: "runc", FirstAffected: "0.0.1", Mainline: "1.0.0-rc7",
		UpstreamSource: "https://www.openwall.com/lists/oss-security/2019/02/11/2 (fixed after 1.0-rc6)"},
	{ID: "CVE-2024-29018", Component: "docker", FirstAffected: "0.1", Mainline: "26.0.0", Backports: []string{"25.0.4", "23.0.11"},
		UpstreamSource: "https://github.com/flatcar/Flatcar/issues/1405 (fixed in 26.0.0, 25.0.4, 23.0.11), as cited in hardening.md §1.3 CMP-N06",
		Distro: []DistroFix{
			{Distro: "debian", Release: "deb12", Fixed: "", Checked: "2026-12-03",
				Source: "Debian changelog of docker.io through 20.10.24+dfsg1-1+deb12u1 (bookworm, 2024-10-12) lists no fix for CVE-2024-29018"},
		}},
	{ID: "CVE-2016-5195", Component: "kernel", FirstAffected: "2.6.22", Mainline: "4.8.3", Backports: []string{"4.7.9", "4.4.26"},
		UpstreamSource: "Dirty COW: hardening.md §6.2 class 16; kernel.org stable 4.8.3/4.7.9/4.4.26"},
	{ID: "CVE-2022-0847", Component: "kernel", FirstAffected: "5.8", Mainline: "5.16.11", Backports: []string{"5.15.25", "5.10.102"},
		UpstreamSource: "Dirty Pipe: https://dirtypipe.cm4all.com/ (fixed in 5.16.11, 5.15.25, 5.10.102)"},
	{ID: "CVE-2017-7308", Component: "kernel", FirstAffected: "3.2", Mainline: "4.10.6", Backports: []string{"4.9.18", "4.4.57"},
		UpstreamSource: "packet socket UAF: hardening.md §6.2 class 18; kernel.org stable 4.10.6/4.9.18/4.4.57"},
	{ID: "CVE-2017-16995", Component: "kernel", FirstAffected: "4.4", Mainline: "4.14.8", Backports: []string{"4.9.71"},
		UpstreamSource: "eBPF verifier: hardening.md §6.2 class 15; kernel.org stable 4.14.8/4.9.71"},
	{ID: "CVE-2022-0811", Component: "crio", FirstAffected: "1.19", Mainline: "1.24", Backports: []string{"1.23.2", "1.22.3", "1.21.6", "1.20.7", "1.19.6"},
		UpstreamSource: "CRI-O sysctl injection (cr8escape): hardening.md §6.2 class 3; fixed in 1.23.2, 1.22.3, 1.21.6, 1.20.7, 1.19.6"},
	{ID: "CVE-2019-11246", Component: "kubectl", FirstAffected: "1.0", Mainline: "1.15.2", Backports: []string{"1.14.5", "1.13.9"},
		UpstreamSource: "kubectl cp tar traversal family: hardening.md §6.2 class 2; fixed in 1.13.9, 1.14.5, 1.15.2"},
}
