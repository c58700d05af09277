package pvesim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// route is one method on one path template of the schema. spec declares the accepted parameters
// as "name:type" with type s(tring) i(nteger) n(umber) b(oolean) a(rray) or c (a string in
// PVE's pve-configid format, ≤ 40 characters, as snapshot names are), a trailing "!" for
// required; "*" accepts undeclared keys (config endpoints take any config key).
type route struct {
	method  string
	pattern string
	spec    string
	h       func(*call) (any, error)
}

// Route is a method + path template the simulator implements.
type Route struct{ Method, Path string }

// Routes lists every implemented route (for the schema-walk test).
func (s *Server) Routes() []Route {
	out := make([]Route, 0, len(s.routes))
	for _, r := range s.routes {
		out = append(out, Route{r.method, r.pattern})
	}
	return out
}

func splitPath(p string) []string {
	var out []string
	for _, seg := range strings.Split(p, "/") {
		if seg != "" { // PVE ignores empty fragments: "/pools/" == "/pools"
			out = append(out, seg)
		}
	}
	return out
}

func (s *Server) match(method, path string) (*route, map[string]string) {
	segs := splitPath(path)
	for i := range s.routes {
		rt := &s.routes[i]
		if rt.method != method {
			continue
		}
		pat := splitPath(rt.pattern)
		if len(pat) != len(segs) {
			continue
		}
		vars := map[string]string{}
		ok := true
		for j, p := range pat {
			if strings.HasPrefix(p, "{") {
				vars[strings.Trim(p, "{}")] = segs[j]
			} else if p != segs[j] {
				ok = false
				break
			}
		}
		if ok {
			return rt, vars
		}
	}
	return nil, nil
}

var intRE = regexp.MustCompile(`^-?\d+$`)

// checkParams is PVE's JSONSchema validate for the route's declared parameters.
func checkParams(spec string, params map[string]any) error {
	decl := map[string]string{}
	open := false
	for _, f := range strings.Fields(spec) {
		if f == "*" {
			open = true
			continue
		}
		name, typ, _ := strings.Cut(f, ":")
		decl[name] = typ
	}
	errs := map[string]string{}
	for name, typ := range decl {
		req := strings.HasSuffix(typ, "!")
		typ = strings.TrimSuffix(typ, "!")
		v, ok := params[name]
		if !ok {
			if req {
				errs[name] = "property is missing and it is not optional"
			}
			continue
		}
		if msg := typeCheck(typ, v); msg != "" {
			errs[name] = msg
		}
	}
	if !open {
		for name := range params {
			if _, ok := decl[name]; !ok {
				errs[name] = "property is not defined in schema and the schema does not allow additional properties"
			}
		}
	}
	if len(errs) > 0 {
		return paramErr(errs)
	}
	return nil
}

func typeCheck(typ string, v any) string {
	switch typ {
	case "i":
		switch x := v.(type) {
		case float64:
			if x == math.Trunc(x) {
				return ""
			}
		case string:
			if intRE.MatchString(x) {
				return ""
			}
		}
		return fmt.Sprintf("type check ('integer') failed - got '%v'", v)
	case "n":
		switch x := v.(type) {
		case float64:
			return ""
		case string:
			if _, err := strconv.ParseFloat(x, 64); err == nil {
				return ""
			}
		}
		return fmt.Sprintf("type check ('number') failed - got '%v'", v)
	case "b":
		switch x := v.(type) {
		case bool:
			return ""
		case float64:
			if x == 0 || x == 1 {
				return ""
			}
		case string:
			if x == "0" || x == "1" {
				return ""
			}
		}
		return fmt.Sprintf("type check ('boolean') failed - got '%v'", v)
	case "a":
		switch v.(type) {
		case []any, string:
			return ""
		}
		return "type check ('array') failed"
	case "c":
		if x, ok := v.(string); !ok || !configIDRE.MatchString(x) || len(x) > 40 {
			return fmt.Sprintf("invalid format - invalid configuration ID '%v'", v)
		}
		return ""
	case "s":
		switch v.(type) {
		case string, float64:
			return ""
		}
		return fmt.Sprintf("type check ('string') failed - got '%v'", v)
	}
	return ""
}

// str, integer and boolean read validated parameters.
func (c *call) str(name string) string {
	switch x := c.params[name].(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func (c *call) has(name string) bool { _, ok := c.params[name]; return ok }

func (c *call) integer(name string, def int) int {
	switch x := c.params[name].(type) {
	case float64:
		return int(x)
	case string:
		if n, err := strconv.Atoi(x); err == nil {
			return n
		}
	}
	return def
}

func (c *call) boolean(name string) bool {
	switch x := c.params[name].(type) {
	case bool:
		return x
	case float64:
		return x == 1
	case string:
		return x == "1"
	}
	return false
}

// vmid parses the {vmid} path variable as PVE's pve-vmid (100..999999999).
func (c *call) vmid() (int, error) {
	raw := c.vars["vmid"]
	n, err := strconv.Atoi(raw)
	if err != nil || !intRE.MatchString(raw) {
		return 0, paramErr(map[string]string{"vmid": fmt.Sprintf("type check ('integer') failed - got '%s'", raw)})
	}
	if n < 100 || n > 999999999 {
		return 0, paramErr(map[string]string{"vmid": "value must have a minimum value of 100"})
	}
	return n, nil
}

// --- authentication ---------------------------------------------------------------------------

var errNoTicket = &apiError{status: 401, msg: "No ticket"}
var errAuthFailed = &apiError{status: 401, msg: "Authentication failed!"}

// authenticate returns the user a request acts as: the full token id for API tokens, or the
// ticket's user (non-GET requests then need the matching CSRF token).
func (s *Server) authenticate(r *http.Request) (string, error) {
	auth := r.Header.Get("Authorization")
	if v, ok := strings.CutPrefix(auth, "PVEAPIToken="); ok {
		i := strings.LastIndex(v, "=") // PVE splits at the last '='
		if i < 0 {
			return "", errAuthFailed
		}
		id, secret := v[:i], v[i+1:]
		if id != s.opts.TokenID || !hmac.Equal([]byte(secret), []byte(s.secret)) {
			return "", errAuthFailed
		}
		return id, nil
	}
	ticket := ""
	if c, err := r.Cookie("PVEAuthCookie"); err == nil {
		ticket = c.Value
	} else if v, ok := strings.CutPrefix(auth, "PVEAuthCookie="); ok {
		ticket = v
	}
	if ticket == "" {
		return "", errNoTicket
	}
	user, ok := s.verifyTicket(ticket)
	if !ok {
		return "", errAuthFailed
	}
	if r.Method != http.MethodGet {
		if !s.verifyCSRF(user, r.Header.Get("CSRFPreventionToken")) {
			return "", &apiError{status: 401, msg: "Permission denied - invalid csrf token"}
		}
	}
	return user, nil
}

func (s *Server) sign(parts ...string) string {
	m := hmac.New(sha256.New, s.hmacKey)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return base64.RawStdEncoding.EncodeToString(m.Sum(nil))
}

// ticketFor assembles PVE:<user>:<8-hex time>::<sig> and the CSRF token <8-hex time>:<hmac>.
func (s *Server) ticketFor(user string, now time.Time) (ticket, csrf string) {
	ts := fmt.Sprintf("%08X", now.Unix())
	plain := "PVE:" + user + ":" + ts
	return plain + "::" + s.sign("ticket", plain), ts + ":" + s.sign("csrf", user, ts)
}

func (s *Server) verifyTicket(t string) (string, bool) {
	plain, sig, ok := strings.Cut(t, "::")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.sign("ticket", plain))) {
		return "", false
	}
	parts := strings.Split(plain, ":")
	if len(parts) != 3 || parts[0] != "PVE" {
		return "", false
	}
	ts, err := strconv.ParseInt(parts[2], 16, 64)
	if err != nil || time.Since(time.Unix(ts, 0)) > 2*time.Hour {
		return "", false
	}
	return parts[1], true
}

func (s *Server) verifyCSRF(user, tok string) bool {
	ts, sig, ok := strings.Cut(tok, ":")
	return ok && hmac.Equal([]byte(sig), []byte(s.sign("csrf", user, ts)))
}
