package author

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rangekeeper/rangekeeper/spec"
)

// Text-level fixes: most one-key fixes touch one key of one service, so they are applied as a
// line edit located by the YAML node positions. Everything else in the file (comments, blank
// lines, quoting, indentation) stays byte for byte. A fix whose target is not laid out simply
// (a multi-line value, a flow-style service) falls back to editing the node tree.

// lastLine is the last source line of a node's subtree.
func lastLine(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	l := n.Line
	for _, c := range n.Content {
		if cl := lastLine(c); cl > l {
			l = cl
		}
	}
	return l
}

func mapEntry(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// scalarText renders a scalar the way YAML would write it (quoted when it must be).
func scalarText(val, tag string) string {
	var v any = val
	if tag != "!!str" {
		var decoded any
		if yaml.Unmarshal([]byte(val), &decoded) == nil {
			v = decoded
		}
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return val
	}
	return strings.TrimSuffix(string(out), "\n")
}

type lineEditor struct{ lines []string }

// oneLine reports whether v sits on one line (a scalar or a flow collection).
func oneLine(v *yaml.Node) bool {
	if v == nil || lastLine(v) != v.Line {
		return false
	}
	if v.Kind == yaml.ScalarNode {
		return v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0
	}
	return v.Style&yaml.FlowStyle != 0
}

// replaceValue swaps the text of a one-line value, keeping a trailing comment.
func (e *lineEditor) replaceValue(v *yaml.Node, text string) bool {
	if !oneLine(v) || v.Line-1 >= len(e.lines) {
		return false
	}
	line := e.lines[v.Line-1]
	start := v.Column - 1
	if start > len(line) {
		return false
	}
	end := len(strings.TrimRight(line, " \t"))
	if v.LineComment != "" {
		if i := strings.Index(line[start:], " #"); i >= 0 {
			end = start + i
		}
	}
	e.lines[v.Line-1] = line[:start] + text + line[end:]
	return true
}

// deleteEntry removes a key and its whole value.
func (e *lineEditor) deleteEntry(k, v *yaml.Node) bool {
	from, to := k.Line-1, lastLine(v)
	if from < 0 || to > len(e.lines) || from >= to {
		return false
	}
	// Only whole lines: the key must start its line.
	if strings.TrimSpace(e.lines[from][:k.Column-1]) != "" {
		return false
	}
	e.lines = append(e.lines[:from], e.lines[to:]...)
	return true
}

// appendEntry adds "key: text" as the last entry of a block mapping.
func (e *lineEditor) appendEntry(m *yaml.Node, key, text string) bool {
	if m == nil || m.Kind != yaml.MappingNode || m.Style&yaml.FlowStyle != 0 || len(m.Content) == 0 {
		return false
	}
	at := lastLine(m)
	if at > len(e.lines) {
		return false
	}
	line := strings.Repeat(" ", m.Content[0].Column-1) + key + ": " + text
	e.lines = append(e.lines[:at], append([]string{line}, e.lines[at:]...)...)
	return true
}

// setEntry replaces a key's one-line value or appends the key.
func (e *lineEditor) setEntry(m *yaml.Node, key, text string) bool {
	if _, v := mapEntry(m, key); v != nil {
		return e.replaceValue(v, text)
	}
	return e.appendEntry(m, key, text)
}

var textFixes = map[string]func(e *lineEditor, root, svc *yaml.Node, f spec.Finding) bool{
	"CMP-H01": delEntry("privileged"), "CMP-H03": delEntry("use_api_socket"), "CMP-H16": delEntry("pid"),
	"CMP-H17": delEntry("ipc"), "CMP-H19": delEntry("userns_mode"),
	"CMP-N01": setEntry("network_mode", "none", "!!str"), "CMP-H24": setEntry("read_only", "true", "!!bool"),
	"CMP-H25": setEntry("user", "1000:1000", "!!str"), "CMP-H26": setEntry("runtime", "runsc", "!!str"),
	"CMP-R01": setEntry("mem_limit", "1g", "!!str"), "CMP-R02": setEntry("cpus", "1", "!!float"),
	"CMP-R03": setEntry("pids_limit", "256", "!!int"), "CMP-R08": setEntry("init", "true", "!!bool"),
	"CMP-H08": func(e *lineEditor, _, svc *yaml.Node, _ spec.Finding) bool {
		return e.setEntry(svc, "cap_drop", "[ALL]")
	},
	"CMP-H13": func(e *lineEditor, _, svc *yaml.Node, _ spec.Finding) bool {
		const nnp = `"no-new-privileges:true"`
		_, seq := mapEntry(svc, "security_opt")
		if seq == nil {
			return e.appendEntry(svc, "security_opt", "["+nnp+"]")
		}
		if seq.Kind != yaml.SequenceNode {
			return false
		}
		for _, item := range seq.Content {
			if strings.HasPrefix(strings.ToLower(item.Value), "no-new-privileges") {
				return e.replaceValue(item, nnp)
			}
		}
		if seq.Style&yaml.FlowStyle != 0 {
			items := make([]string, 0, len(seq.Content)+1)
			for _, item := range seq.Content {
				items = append(items, scalarText(item.Value, "!!str"))
			}
			return e.replaceValue(seq, "["+strings.Join(append(items, nnp), ", ")+"]")
		}
		if len(seq.Content) == 0 || seq.Content[0].Column < 3 {
			return false
		}
		at := lastLine(seq)
		line := strings.Repeat(" ", seq.Content[0].Column-3) + "- " + nnp
		e.lines = append(e.lines[:at], append([]string{line}, e.lines[at:]...)...)
		return true
	},
	"CMP-N03": func(e *lineEditor, root, svc *yaml.Node, f spec.Finding) bool {
		parts := strings.Split(f.Path, ".")
		if len(parts) < 4 || parts[2] != "networks" {
			return e.setEntry(svc, "network_mode", "none")
		}
		_, nets := mapEntry(root, "networks")
		_, def := mapEntry(nets, parts[3])
		switch {
		case def == nil:
			return false
		case def.Kind == yaml.MappingNode && def.Style&yaml.FlowStyle == 0 && len(def.Content) > 0:
			return e.setEntry(def, "internal", "true")
		case def.Kind == yaml.MappingNode && len(def.Content) == 0, def.Kind == yaml.ScalarNode && def.Tag == "!!null" && def.Value != "":
			return e.replaceValue(def, "{internal: true}")
		}
		return false
	},
}

func delEntry(key string) func(*lineEditor, *yaml.Node, *yaml.Node, spec.Finding) bool {
	return func(e *lineEditor, _, svc *yaml.Node, _ spec.Finding) bool {
		k, v := mapEntry(svc, key)
		return k != nil && e.deleteEntry(k, v)
	}
}

func setEntry(key, val, tag string) func(*lineEditor, *yaml.Node, *yaml.Node, spec.Finding) bool {
	return func(e *lineEditor, _, svc *yaml.Node, _ spec.Finding) bool {
		return e.setEntry(svc, key, scalarText(val, tag))
	}
}

// textFix applies a fix as a line edit; ok is false when the layout is not simple enough.
func textFix(data []byte, f spec.Finding) (out []byte, ok bool) {
	fx, found := textFixes[f.RuleID]
	if !found {
		return nil, false
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil, false
	}
	root := doc.Content[0]
	parts := strings.Split(f.Path, ".")
	if len(parts) < 2 || parts[0] != "services" {
		return nil, false
	}
	_, svc := mapEntry(mapEntry2(root, "services"), strings.SplitN(parts[1], "[", 2)[0])
	if svc == nil || svc.Kind != yaml.MappingNode || svc.Style&yaml.FlowStyle != 0 {
		return nil, false
	}
	e := &lineEditor{lines: strings.Split(string(data), "\n")}
	if !fx(e, root, svc, f) {
		return nil, false
	}
	return []byte(strings.Join(e.lines, "\n")), true
}

func mapEntry2(m *yaml.Node, key string) *yaml.Node { _, v := mapEntry(m, key); return v }
