package catalog

import (
	"fmt"
	"strings"
)

// RuntimePolicy says how much a sandboxed runtime (gVisor, Kata) for the agent matters to the
// operator: CMP-H26, HELM-H01 and K8S-H18 take their severity from it.
type RuntimePolicy string

const (
	RuntimeRequired    RuntimePolicy = "required"    // HIGH: the agent must have a second kernel boundary
	RuntimeRecommended RuntimePolicy = "recommended" // MEDIUM (the default)
	RuntimeOff         RuntimePolicy = "off"         // INFO: shown, never failing a build
)

// ParseRuntimePolicy accepts required, recommended or off ("" is recommended).
func ParseRuntimePolicy(s string) (RuntimePolicy, error) {
	switch p := RuntimePolicy(strings.ToLower(strings.TrimSpace(s))); p {
	case "":
		return RuntimeRecommended, nil
	case RuntimeRequired, RuntimeRecommended, RuntimeOff:
		return p, nil
	}
	return "", fmt.Errorf("unknown sandboxed-runtime policy %q (want required, recommended or off)", s)
}

// UnmarshalText lets the config file carry the policy.
func (p *RuntimePolicy) UnmarshalText(b []byte) error {
	v, err := ParseRuntimePolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// IsSandboxedRuntime reports whether a Docker runtime or Kubernetes RuntimeClass name is gVisor
// or Kata (a second kernel in front of the host's).
func IsSandboxedRuntime(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	return n == "gvisor" || strings.Contains(n, "runsc") || strings.HasPrefix(n, "kata") || strings.Contains(n, ".kata.")
}

// SandboxedRuntimeSeverity is the severity of "the agent runs without a sandboxed runtime"
// under policy. offered are the runtimes the engine or cluster offers; known is false when
// they are not known (a spec linted away from its engine). A recommendation the engine cannot
// follow (it offers no sandboxed runtime) drops to INFO and says so.
func SandboxedRuntimeSeverity(policy RuntimePolicy, offered []string, known bool) (Severity, string) {
	switch policy {
	case RuntimeOff:
		return SeverityInfo, "sandboxed-runtime policy is off"
	case RuntimeRequired:
		if known && !offersSandboxed(offered) {
			return SeverityHigh, fmt.Sprintf("policy requires a sandboxed runtime and the engine offers none (%s)", strings.Join(offered, ", "))
		}
		return SeverityHigh, "policy requires a sandboxed runtime"
	}
	if known && !offersSandboxed(offered) {
		return SeverityInfo, fmt.Sprintf("the engine offers no sandboxed runtime (%s): install gVisor or Kata to follow the recommendation", strings.Join(offered, ", "))
	}
	return SeverityMedium, "a sandboxed runtime is recommended"
}

func offersSandboxed(offered []string) bool {
	for _, r := range offered {
		if IsSandboxedRuntime(r) {
			return true
		}
	}
	return false
}
