package author

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rangekeeper/rangekeeper/spec"
)

// openFile is an existing spec opened for fixing.
type openFile struct {
	path   string
	data   []byte
	format spec.Format
}

// nodeFix edits the YAML tree of a Compose file for one rule; svc is the service mapping.
type nodeFix func(root, svc *yaml.Node, f spec.Finding) error

var composeNodeFixes = map[string]nodeFix{
	"CMP-H01": deleteKey("privileged"),
	"CMP-H03": deleteKey("use_api_socket"),
	"CMP-H16": deleteKey("pid"),
	"CMP-H17": deleteKey("ipc"),
	"CMP-H19": deleteKey("userns_mode"),
	"CMP-N01": setScalar("network_mode", "none", "!!str"),
	"CMP-H24": setScalar("read_only", "true", "!!bool"),
	"CMP-H25": setScalar("user", "1000:1000", "!!str"),
	"CMP-H26": setScalar("runtime", "runsc", "!!str"),
	"CMP-R01": setScalar("mem_limit", "1g", "!!str"),
	"CMP-R02": setScalar("cpus", "1", "!!float"),
	"CMP-R03": setScalar("pids_limit", "256", "!!int"),
	"CMP-R08": setScalar("init", "true", "!!bool"),
	"CMP-H08": func(_, svc *yaml.Node, _ spec.Finding) error {
		setKey(svc, "cap_drop", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{scalar("ALL", "!!str")}})
		return nil
	},
	"CMP-H13": func(_, svc *yaml.Node, _ spec.Finding) error {
		seq := mapGet(svc, "security_opt")
		if seq == nil || seq.Kind != yaml.SequenceNode {
			setKey(svc, "security_opt", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{scalar("no-new-privileges:true", "!!str")}})
			return nil
		}
		for i, c := range seq.Content {
			if strings.HasPrefix(strings.ToLower(c.Value), "no-new-privileges") {
				seq.Content[i] = scalar("no-new-privileges:true", "!!str")
				return nil
			}
		}
		seq.Content = append(seq.Content, scalar("no-new-privileges:true", "!!str"))
		return nil
	},
	"CMP-N03": func(root, svc *yaml.Node, f spec.Finding) error {
		// services.<svc>.networks.<net>: make that network internal; the implicit default
		// network has no definition to edit, so cut the agent off the network instead.
		parts := strings.Split(f.Path, ".")
		if len(parts) >= 4 && parts[2] == "networks" {
			nets := mapGet(root, "networks")
			if nets == nil {
				nets = &yaml.Node{Kind: yaml.MappingNode}
				setKey(root, "networks", nets)
			}
			def := mapGet(nets, parts[3])
			if def == nil || def.Kind != yaml.MappingNode {
				def = &yaml.Node{Kind: yaml.MappingNode}
				setKey(nets, parts[3], def)
			}
			setKey(def, "internal", scalar("true", "!!bool"))
			return nil
		}
		setKey(svc, "network_mode", scalar("none", "!!str"))
		return nil
	},
}

func scalar(v, tag string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: tag} }

func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey replaces the value of key in place (keeping the key's comments) or appends it.
func setKey(m *yaml.Node, key string, val *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			val.LineComment = m.Content[i+1].LineComment
			m.Content[i+1] = val
			return
		}
	}
	m.Content = append(m.Content, scalar(key, "!!str"), val)
}

func deleteKey(key string) nodeFix {
	return func(_, svc *yaml.Node, _ spec.Finding) error {
		for i := 0; i+1 < len(svc.Content); i += 2 {
			if svc.Content[i].Value == key {
				svc.Content = append(svc.Content[:i], svc.Content[i+2:]...)
				return nil
			}
		}
		return fmt.Errorf("%s is not written in this service (it may come from an anchor or extends)", key)
	}
}

func setScalar(key, val, tag string) nodeFix {
	return func(_, svc *yaml.Node, _ spec.Finding) error {
		setKey(svc, key, scalar(val, tag))
		return nil
	}
}

// fixFile applies a finding's fix as a line edit when it can (the rest of the file is kept byte
// for byte), otherwise to the file's YAML tree, re-encoded: that keeps comments and key order,
// but yaml.v3 normalises indentation and drops blank lines.
func fixFile(of *openFile, f spec.Finding) ([]byte, error) {
	if of.format != spec.FormatCompose {
		return nil, fmt.Errorf("one-key fixes for existing files cover Compose only; fix %s by hand: %s", f.RuleID, f.Fix)
	}
	if out, ok := textFix(of.data, f); ok {
		return out, nil
	}
	fx, ok := composeNodeFixes[f.RuleID]
	if !ok {
		return nil, fmt.Errorf("%s has no automatic fix; %s", f.RuleID, f.Fix)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(of.data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("empty document")
	}
	root := doc.Content[0]
	parts := strings.Split(f.Path, ".")
	if len(parts) < 2 || parts[0] != "services" {
		return nil, fmt.Errorf("%s is not tied to a service", f.RuleID)
	}
	svc := mapGet(mapGet(root, "services"), strings.SplitN(parts[1], "[", 2)[0])
	if svc == nil || svc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("service %s is not defined in this file", parts[1])
	}
	if err := fx(root, svc, f); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
