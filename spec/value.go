package spec

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// val is the one typed accessor every rule reads decoded YAML/JSON through. A spec may put a
// null, a list or a map anywhere a rule expects a string (`pid:` with no value, `privileged:
// [true]`); each method answers "absent" for those instead of asserting a type, so a rule sees
// an ordinary input, never a panic.
type val struct{ x any }

// at walks keys through nested maps; a missing key or a non-map on the way is absent.
func at(m any, keys ...string) val {
	cur := m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return val{}
		}
		cur = mm[k]
	}
	return val{cur}
}

// Present reports whether the value exists and is not null.
func (v val) Present() bool { return v.x != nil }

// Str renders a scalar (string, bool, number); null, lists and maps are "".
func (v val) Str() string {
	switch x := v.x.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return ""
}

// Bool reads YAML/Compose booleans, including the string forms Compose accepts.
func (v val) Bool() (b, set bool) {
	switch x := v.x.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "y", "1", "on":
			return true, true
		case "false", "no", "n", "0", "off":
			return false, true
		}
	case int, int64, uint64, float64:
		f, _ := v.Num()
		return f != 0, true
	}
	return false, false
}

// Num reads a number or a numeric string.
func (v val) Num() (float64, bool) {
	switch x := v.x.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// Map is the value as a map, or nil.
func (v val) Map() map[string]any { m, _ := v.x.(map[string]any); return m }

// List is the value as a list, or nil.
func (v val) List() []any { l, _ := v.x.([]any); return l }

// Strings reads a list of scalars (non-scalar items are skipped) or a single scalar.
func (v val) Strings() []string {
	switch x := v.x.(type) {
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s := (val{e}).Str(); s != "" || e == "" {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return x
	case nil, map[string]any:
		return nil
	}
	if s := v.Str(); s != "" {
		return []string{s}
	}
	return nil
}

// The short forms below are what rule code calls; they all go through val.

func get(m any, keys ...string) any               { return at(m, keys...).x }
func getString(m any, keys ...string) string      { return at(m, keys...).Str() }
func getMap(m any, keys ...string) map[string]any { return at(m, keys...).Map() }
func getList(m any, keys ...string) []any         { return at(m, keys...).List() }
func getBool(m any, keys ...string) (b, set bool) { return at(m, keys...).Bool() }
func strList(v any) []string                      { return val{v}.Strings() }
func num(v any) (float64, bool)                   { return val{v}.Num() }
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// envVar is one variable of a Compose environment (or build args) in any of its spellings:
// `K: v`, `K:` (null: passed through from the caller's environment), `- K=v`, `- K`.
type envVar struct {
	name  string
	value string // after interpolation; "" when passed through
	pass  bool   // no value in the spec: the harness's own variable of that name enters
	key   string // the path element it was written under (map key or list index)
}

// envVars reads a map- or list-form environment; entries that are not scalars are skipped.
func envVars(raw any) []envVar {
	var out []envVar
	switch x := raw.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			v := val{x[k]}
			out = append(out, envVar{name: k, value: v.Str(), pass: !v.Present() || v.Str() == harnessRef(k), key: k})
		}
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				continue
			}
			k, v, has := strings.Cut(s, "=")
			out = append(out, envVar{name: strings.TrimSpace(k), value: v, pass: !has || v == harnessRef(k), key: strconv.Itoa(i)})
		}
	}
	return out
}
