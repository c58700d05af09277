package inspectlive

import (
	"regexp"
	"strings"
)

// timeoutRE is the wrapper Inspect's docker exec puts before the command (SandboxEvent.cmd
// leaves it out).
var timeoutRE = regexp.MustCompile(`^timeout -k \S+ \S+ `)

// normalizeExec turns an exec command seen in the sandbox into SandboxEvent.cmd's argv, minus
// the timeout wrapper. It takes Docker's "exec_start: <argv joined by spaces>" event action as
// well as a plain command line.
func normalizeExec(cmd string) string {
	cmd = strings.TrimPrefix(strings.TrimSpace(cmd), "exec_start: ")
	return timeoutRE.ReplaceAllString(cmd, "")
}

// shellQuote is Python's shlex.quote, so a bash() tool call can be compared with the exec.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// shellSplit undoes shlex.join (single quotes, double quotes, backslashes), so a quoted
// SandboxEvent.cmd can be compared with Docker's unquoted, space-joined argv.
func shellSplit(s string) []string {
	var args []string
	var cur strings.Builder
	in, quote, esc := false, rune(0), false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				esc = true
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\':
			esc, in = true, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				args = append(args, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		args = append(args, cur.String())
	}
	return args
}

// sameCommand compares an exec (normalized) with a shlex-joined command, quoted or not.
func sameCommand(exec, joined string) bool {
	return exec == joined || exec == strings.Join(shellSplit(joined), " ")
}

// ranCommand reports whether the sample ran (or is running) one of the exec commands: a
// SandboxEvent's cmd, or the in-flight bash() call as Inspect runs it (bash --login -c <cmd>).
func ranCommand(st *SampleState, execs []string) bool {
	for _, raw := range execs {
		x := normalizeExec(raw)
		if x == "" {
			continue
		}
		for _, c := range st.Commands {
			if c.Action == "exec" && sameCommand(x, c.Cmd) {
				return true
			}
		}
		if p := st.Pending; p != nil && p.Cmd != "" {
			if x == p.Cmd || sameCommand(x, "bash --login -c "+shellQuote(p.Cmd)) {
				return true
			}
		}
	}
	return false
}
