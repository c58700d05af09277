package backends

import "context"

// MemberStats is one resource-use sample of a sandbox member.
type MemberStats struct {
	Member     string  `json:"member"`      // member name
	Running    bool    `json:"running"`     // stopped members report zero use
	CPUPercent float64 `json:"cpu_percent"` // of one CPU (100 = one core busy)
	MemBytes   uint64  `json:"mem_bytes"`
	MemLimit   uint64  `json:"mem_limit,omitempty"`
}

// StatsReader samples the resource use of a sandbox's members once. It is optional: backends
// without cheap per-member stats simply do not implement it.
type StatsReader interface {
	Stats(ctx context.Context, sandboxID string) ([]MemberStats, error)
}
