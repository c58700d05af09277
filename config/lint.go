package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// LintConfig is the `lint:` section: policies that set how severe some findings are.
type LintConfig struct {
	Policy LintPolicy `yaml:"policy"`
}

// LintPolicy holds the operator's hardening policies.
type LintPolicy struct {
	// SandboxedRuntime: required (HIGH), recommended (MEDIUM, the default) or off (INFO) for
	// an agent without gVisor/Kata (CMP-H26, HELM-H01, K8S-H18).
	SandboxedRuntime catalog.RuntimePolicy `yaml:"sandboxed_runtime"`
}

// UnmarshalYAML checks keys and values itself so a mistake is reported with its line.
func (p *LintPolicy) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: lint.policy must be a mapping", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "sandboxed_runtime":
			rp, err := catalog.ParseRuntimePolicy(v.Value)
			if err != nil || v.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: lint.policy.sandboxed_runtime: want required, recommended or off, not %q", v.Line, v.Value)
			}
			p.SandboxedRuntime = rp
		default:
			return fmt.Errorf("line %d: field %s not found in lint.policy (known: sandboxed_runtime)", k.Line, k.Value)
		}
	}
	return nil
}
