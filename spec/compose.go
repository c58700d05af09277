package spec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

var composePathRE = regexp.MustCompile(`\b(services|networks|volumes|secrets|configs)\.[A-Za-z0-9_.\-\[\]]+`)

// parseCompose loads the file the way `docker compose config` would (anchors, extends, include,
// ${VAR} interpolation, canonical long syntax) and keeps the YAML position map for findings.
func parseCompose(doc *document, opts Options) error {
	if topMapping(doc.root) == nil {
		return &InputError{File: doc.name, Line: 1, Msg: "a Compose file must be a YAML mapping"}
	}
	abs, err := filepath.Abs(doc.name)
	if err != nil {
		abs = doc.name
	}
	env := types.Mapping{}
	for k, v := range opts.Env {
		env[k] = v
	}
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs, Content: doc.data}},
		Environment: env,
	}
	model, err := loader.LoadModelWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("rangekeeper-lint", true)
		o.SkipResolveEnvironment = true // env_file contents are not read: lint must not need them
		o.SkipConsistencyCheck = true   // undefined networks are reported, not fatal
		o.SkipResolveLabels = true      // label_file contents are not read either
		// extends/include are read only as regular files under the size cap: a hostile spec
		// must not make lint read /dev/zero or a FIFO forever.
		o.ResourceLoaders = append([]loader.ResourceLoader{boundedLoader{dir: details.WorkingDir, max: opts.maxBytes()}}, o.ResourceLoaders...)
	})
	if err != nil {
		return composeError(doc, abs, err)
	}
	doc.model = model
	return nil
}

// composeError attaches the line of the key the loader complains about.
func composeError(doc *document, abs string, err error) error {
	msg := strings.ReplaceAll(err.Error(), abs, doc.name)
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
	msg = strings.ReplaceAll(msg, "failed to parse "+doc.name+": ", "")
	ie := &InputError{File: doc.name, Line: 1, Msg: "invalid Compose file: " + msg}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		return yamlError(doc.name, errors.New(msg))
	}
	if n := scalarMentioned(doc.root, msg, 0); n != nil {
		// e.g. an extends/include path the loader refused: point at where it is written.
		ie.Line, ie.Column = n.Line, n.Column
	}
	if loc := composePathRE.FindString(msg); loc != "" {
		loc = strings.NewReplacer("[", ".", "]", "").Replace(loc)
		pos := doc.position(Path(strings.Split(loc, ".")))
		ie.Line, ie.Column = pos.Line, pos.Column
	}
	return ie
}

// composeView is the merged model plus the roles rules need: which services are the agent,
// which belong to the scoring plane, which networks each service joins.
type composeView struct {
	services map[string]map[string]any
	order    []string
	networks map[string]map[string]any
	agents   map[string]bool
	roles    map[string]string
}

var scoringRoles = map[string]bool{"scorer": true, "ledger": true, "grader": true, "flagstore": true, "flag-store": true, "secrets": true, "judge": true}

var scoringNameRE = regexp.MustCompile(`(?i)(scor|ledger|grader|judge|flag-?store|answer)`)

func newComposeView(model map[string]any, root *yaml.Node, opts Options) *composeView {
	v := &composeView{services: map[string]map[string]any{}, networks: map[string]map[string]any{}, agents: map[string]bool{}, roles: map[string]string{}}
	for name, s := range getMap(model, "services") {
		m, _ := s.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		v.services[name] = m
	}
	for name, n := range getMap(model, "networks") {
		m, _ := n.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		v.networks[name] = m
	}
	// Inspect's "first service" is first in the file, so keep file order where it is known.
	seen := map[string]bool{}
	for _, n := range mappingKeys(mappingValue(topMapping(root), "services")) {
		if v.services[n] != nil && !seen[n] {
			v.order, seen[n] = append(v.order, n), true
		}
	}
	for _, n := range sortedKeys(v.services) {
		if !seen[n] {
			v.order = append(v.order, n)
		}
	}
	for name, svc := range v.services {
		if r := declaredRole(svc); r != "" {
			v.roles[name] = r
		} else if scoringNameRE.MatchString(name) {
			v.roles[name] = "scorer"
		}
	}
	for name, r := range opts.Roles {
		v.roles[name] = strings.ToLower(r)
	}
	switch {
	case len(opts.AgentServices) > 0:
		for _, a := range opts.AgentServices {
			v.agents[a] = true
		}
	case v.services["default"] != nil:
		v.agents["default"] = true
	default:
		for name, svc := range v.services {
			if b, _ := getBool(svc, "x-default"); b {
				v.agents[name] = true
			}
		}
		for name, r := range v.roles {
			if r == "agent" {
				v.agents[name] = true
			}
		}
		if len(v.agents) == 0 && len(v.order) > 0 {
			v.agents[v.order[0]] = true
		}
	}
	for a := range v.agents {
		v.roles[a] = "agent"
	}
	return v
}

// declaredRole reads `x-rangekeeper: {role: ...}`, `x-range.role`, or the same as a label.
func declaredRole(svc map[string]any) string {
	for _, k := range []string{"x-rangekeeper", "x-range"} {
		if r := getString(svc, k, "role"); r != "" {
			return strings.ToLower(r)
		}
	}
	for _, k := range []string{"x-range.role", "x-rangekeeper.role"} {
		if r := getString(svc, k); r != "" {
			return strings.ToLower(r)
		}
	}
	for _, k := range []string{"x-range.role", "dev.rangekeeper.role"} {
		if r := getString(svc, "labels", k); r != "" {
			return strings.ToLower(r)
		}
	}
	return ""
}

func (v *composeView) isScoring(name string) bool { return scoringRoles[v.roles[name]] }

// serviceNetworks lists the networks a service joins (none when network_mode is set).
func (v *composeView) serviceNetworks(name string) []string {
	svc := v.services[name]
	if getString(svc, "network_mode") != "" {
		return nil
	}
	var out []string
	switch n := svc["networks"].(type) {
	case map[string]any:
		out = sortedKeys(n)
	case []any:
		out = strList(n)
	}
	sort.Strings(out)
	return out
}

func (v *composeView) networkInternal(net string) bool {
	b, _ := getBool(v.networks[net], "internal")
	return b
}

func (v *composeView) agentNames() []string { return sortedKeys(v.agents) }

// composeServices runs fn for every service in file order.
func (c *ctx) composeServices(fn func(name string, svc map[string]any)) {
	names := append([]string(nil), c.compose.order...)
	sort.Strings(names)
	for _, n := range names {
		fn(n, c.compose.services[n])
	}
}

func svcPath(name string, rest ...any) Path { return P(append([]any{"services", name}, rest...)...) }

// boundedLoader resolves local extends/include paths and refuses anything that is not a
// regular file of bounded size. It accepts every path, so remote (git/oci) references are
// treated as local paths and fail instead of reaching the network.
type boundedLoader struct {
	dir string
	max int64
}

func (l boundedLoader) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}

func (l boundedLoader) Accept(string) bool { return true }

func (l boundedLoader) Load(_ context.Context, p string) (string, error) {
	path := l.abs(p)
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file; refusing to read it", p)
	}
	if st.Size() > l.max {
		return "", fmt.Errorf("%s is larger than %d bytes; refusing to read it", p, l.max)
	}
	return path, nil
}

func (l boundedLoader) Dir(p string) string {
	path := l.abs(p)
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		path = l.abs(filepath.Dir(p))
	}
	if rel, err := filepath.Rel(l.dir, path); err == nil {
		return rel
	}
	return path
}

// scalarMentioned finds the first scalar value (a path, a name) that an error message quotes.
func scalarMentioned(n *yaml.Node, msg string, depth int) *yaml.Node {
	if n == nil || depth > 100 {
		return nil
	}
	if n.Kind == yaml.ScalarNode && len(n.Value) > 3 && strings.Contains(msg, n.Value) {
		return n
	}
	for _, c := range n.Content {
		if f := scalarMentioned(c, msg, depth+1); f != nil {
			return f
		}
	}
	return nil
}
