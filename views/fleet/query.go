package fleet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Query is a parsed filter. Terms are ANDed:
//
//	text            name, task, backend, status or endpoint contains text (case-insensitive)
//	!text           none of them contains text
//	field=value     field equals value        (backend, status, task, name, eval, sample, endpoint, sev)
//	field!=value    field differs
//	field~value     field contains value
//	sev>=high       severity comparison (>=, >, <=, <, =), also members>=2
//
// eval is the linked Inspect eval's task; sample= matches the linked sample's id (sample=42)
// or id/epoch (sample=42/1), and the backend's own sample hint; link= is how sure the link is
// (exact, matched, trace, guessed) or orphaned.
type Query struct {
	Raw   string
	terms []term
}

type term struct {
	field string // "" means any text field
	op    string // "has", "not", "=", "!=", "~", ">=", ">", "<=", "<"
	value string
	sev   catalog.Severity
	num   int
}

var fields = map[string]bool{"backend": true, "status": true, "task": true, "name": true, "eval": true, "sample": true, "link": true, "endpoint": true, "sev": true, "members": true, "id": true}

// ParseQuery parses the filter mini-language; errors name the offending term.
func ParseQuery(raw string) (Query, error) {
	q := Query{Raw: raw}
	for _, tok := range strings.Fields(raw) {
		t, err := parseTerm(tok)
		if err != nil {
			return Query{Raw: raw}, err
		}
		q.terms = append(q.terms, t)
	}
	return q, nil
}

func parseTerm(tok string) (term, error) {
	for _, op := range []string{">=", "<=", "!=", "=", "~", ">", "<"} {
		i := strings.Index(tok, op)
		if i <= 0 {
			continue
		}
		f := strings.ToLower(tok[:i])
		if !fields[f] {
			return term{}, fmt.Errorf("filter: unknown field %q in %q (fields: backend, status, task, name, eval, sample, link, endpoint, sev, members, id)", f, tok)
		}
		t := term{field: f, op: op, value: strings.ToLower(tok[i+len(op):])}
		switch f {
		case "sev":
			s, err := catalog.ParseSeverity(t.value)
			if err != nil {
				return term{}, fmt.Errorf("filter: %q: %w", tok, err)
			}
			t.sev = s
		case "members":
			n, err := strconv.Atoi(t.value)
			if err != nil {
				return term{}, fmt.Errorf("filter: %q: members needs a number", tok)
			}
			t.num = n
		default:
			if op == ">=" || op == "<=" || op == ">" || op == "<" {
				return term{}, fmt.Errorf("filter: %q: %s only compares sev and members", tok, op)
			}
		}
		return t, nil
	}
	if v, ok := strings.CutPrefix(tok, "!"); ok {
		return term{op: "not", value: strings.ToLower(v)}, nil
	}
	return term{op: "has", value: strings.ToLower(tok)}, nil
}

// Empty reports whether the query matches everything.
func (q Query) Empty() bool { return len(q.terms) == 0 }

// Match reports whether r satisfies every term.
func (q Query) Match(r *Row) bool {
	for _, t := range q.terms {
		if !t.match(r) {
			return false
		}
	}
	return true
}

func (t term) match(r *Row) bool {
	switch t.op {
	case "has":
		return strings.Contains(r.search, t.value)
	case "not":
		return !strings.Contains(r.search, t.value)
	}
	switch t.field {
	case "sev":
		return compare(int(r.Sev), int(t.sev), t.op)
	case "members":
		return compare(len(r.SB.Members), t.num, t.op)
	case "sample":
		return t.matchAny(r.sampleValues())
	case "link":
		return t.matchAny(r.linkValues())
	}
	return t.matchOne(strings.ToLower(r.field(t.field)))
}

// matchAny is a term over a field with several values: = and ~ hold when one value does, !=
// when none equals.
func (t term) matchAny(vs []string) bool {
	if t.op == "!=" {
		for _, v := range vs {
			if strings.ToLower(v) == t.value {
				return false
			}
		}
		return true
	}
	for _, v := range vs {
		if t.matchOne(strings.ToLower(v)) {
			return true
		}
	}
	return false
}

func (t term) matchOne(v string) bool {
	switch t.op {
	case "=":
		return v == t.value
	case "!=":
		return v != t.value
	case "~":
		return strings.Contains(v, t.value)
	}
	return false
}

func compare(a, b int, op string) bool {
	switch op {
	case ">=":
		return a >= b
	case ">":
		return a > b
	case "<=":
		return a <= b
	case "<":
		return a < b
	case "=":
		return a == b
	case "!=":
		return a != b
	}
	return false
}
