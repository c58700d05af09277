package facts

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// capNames maps capability numbers to names (linux/capability.h, 0..40).
var capNames = [...]string{
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
	"SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
	"IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
	"SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
	"LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
	"WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
}

// Capability numbers the verdicts refer to.
const (
	CapDACReadSearch = 2
	CapNetAdmin      = 12
	CapNetRaw        = 13
	CapSysModule     = 16
	CapSysRawIO      = 17
	CapSysPtrace     = 19
	CapSysAdmin      = 21
	CapBPF           = 39
)

// DockerDefaultCaps is Docker's default effective set (moby oci/defaults.go): 0xa80425fb.
const DockerDefaultCaps uint64 = 0x00000000a80425fb

// dangerousCaps are the CMP-H06 capabilities (CRITICAL and HIGH tiers).
var dangerousCaps = []int{CapSysAdmin, CapSysModule, CapDACReadSearch, CapSysRawIO, CapBPF,
	CapSysPtrace, CapNetAdmin, 38 /* PERFMON */, 22 /* SYS_BOOT */, 33 /* MAC_ADMIN */, 32, /* MAC_OVERRIDE */
	34 /* SYSLOG */, 25 /* SYS_TIME */}

// CapName returns the name of capability n ("CAP_42" for numbers newer than this table).
func CapName(n int) string {
	if n >= 0 && n < len(capNames) {
		return capNames[n]
	}
	return fmt.Sprintf("CAP_%d", n)
}

// CapSet is one decoded capability set.
type CapSet struct {
	Hex   string   `json:"hex"`
	Names []string `json:"names"`
	mask  uint64
}

// Has reports whether capability n is in the set.
func (c CapSet) Has(n int) bool { return n >= 0 && n < 64 && c.mask&(1<<uint(n)) != 0 }

// Mask returns the raw bit mask.
func (c CapSet) Mask() uint64 { return c.mask }

// ParseCapSet decodes a /proc/<pid>/status hex capability mask.
func ParseCapSet(hex string) (CapSet, error) {
	hex = strings.TrimSpace(hex)
	v, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return CapSet{}, fmt.Errorf("capability mask %q: %w", hex, err)
	}
	return NewCapSet(v), nil
}

// NewCapSet builds a decoded set from a mask.
func NewCapSet(mask uint64) CapSet {
	c := CapSet{Hex: fmt.Sprintf("%016x", mask), mask: mask, Names: []string{}}
	for m := mask; m != 0; m &= m - 1 {
		c.Names = append(c.Names, CapName(bits.TrailingZeros64(m)))
	}
	return c
}

// Capabilities is P-PRIV-01.
type Capabilities struct {
	Effective   CapSet   `json:"effective"`
	Permitted   CapSet   `json:"permitted"`
	Bounding    CapSet   `json:"bounding"`
	Ambient     CapSet   `json:"ambient"`
	Inheritable CapSet   `json:"inheritable"`
	LastCap     int      `json:"last_cap"`            // /proc/sys/kernel/cap_last_cap, -1 if unreadable
	FullBound   bool     `json:"full_bounding"`       // CapBnd holds every capability the kernel knows: privileged
	Added       []string `json:"added_over_default"`  // CapEff minus Docker's default set
	Dangerous   []string `json:"dangerous_effective"` // CMP-H06 capabilities in CapEff
}

func (c *Capabilities) derive() {
	if c.LastCap > 0 && c.LastCap < 63 {
		full := uint64(1)<<uint(c.LastCap+1) - 1
		c.FullBound = c.Bounding.mask&full == full
	}
	c.Added = NewCapSet(c.Effective.mask &^ DockerDefaultCaps).Names
	c.Dangerous = []string{}
	for _, n := range dangerousCaps {
		if c.Effective.Has(n) {
			c.Dangerous = append(c.Dangerous, CapName(n))
		}
	}
}

// UnmarshalJSON restores the mask from the hex field so a decoded report answers Has.
func (c *CapSet) UnmarshalJSON(b []byte) error {
	var raw struct {
		Hex string `json:"hex"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.Hex == "" {
		*c = NewCapSet(0)
		c.Hex = ""
		return nil
	}
	v, err := ParseCapSet(raw.Hex)
	if err != nil {
		return err
	}
	*c = v
	return nil
}
