package pvesim

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Agent is a VM's scriptable QEMU guest agent: a guest filesystem, a command table and a
// fallback handler. Exec results can be read once, as QGA forgets a PID after reporting it.
type Agent struct {
	Files    map[string][]byte
	Commands map[string]ExecResult // key: argv joined by single spaces
	// Handler runs commands missing from Commands; nil uses the built-ins (echo, cat, id, uname,
	// true, false, rm, chmod, sha256sum, dd, ls, test, sh -c "<one simple command>").
	Handler func(argv []string, stdin []byte, files map[string][]byte) ExecResult
	// Down makes the agent unresponsive ("QEMU guest agent is not running").
	Down bool
	// FreezeHangs makes snapshots fail as a hostile guest stalling fs-freeze would.
	FreezeHangs bool
	OS          string // pretty name for get-osinfo

	execs   map[int]*execState
	nextPID int
}

// ExecResult is what a guest command produces.
type ExecResult struct {
	ExitCode int
	Stdout   string
	Stderr   string
	Duration time.Duration // how long exec-status reports exited:0
}

type execState struct {
	res  ExecResult
	done time.Time
}

func newAgent() *Agent {
	return &Agent{Files: map[string][]byte{}, Commands: map[string]ExecResult{}, OS: "Ubuntu 24.04 LTS", nextPID: 1000}
}

func (a *Agent) up() bool { return a != nil && !a.Down }

// reset forgets running execs (VM stopped).
func (a *Agent) reset() {
	if a != nil {
		a.execs = nil
	}
}

// cloneFor gives a clone the template's disk content and script.
func (a *Agent) cloneFor() *Agent {
	n := newAgent()
	if a == nil {
		return n
	}
	n.Files = cloneFiles(a.Files)
	for k, v := range a.Commands {
		n.Commands[k] = v
	}
	n.Handler, n.OS = a.Handler, a.OS
	return n
}

// agentVM is assert_agent_available: every failure is a 500 with PVE's wording.
func (s *Server) agentVM(c *call) (*vm, error) {
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	if !v.agentEnabled() {
		return nil, fail500("No QEMU guest agent configured")
	}
	if !v.running {
		return nil, fail500("VM %d is not running", v.id)
	}
	if !v.agent.up() {
		return nil, fail500("QEMU guest agent is not running")
	}
	return v, nil
}

func (s *Server) agentPing(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.agentVM(c); err != nil {
		return nil, err
	}
	return map[string]any{"result": map[string]any{}}, nil
}

func (s *Server) agentOSInfo(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.agentVM(c)
	if err != nil {
		return nil, err
	}
	return map[string]any{"result": map[string]any{
		"id": "ubuntu", "name": "Ubuntu", "pretty-name": v.agent.OS, "version": "24.04", "version-id": "24.04",
		"machine": "x86_64", "kernel-release": "6.8.0-45-generic", "kernel-version": "#45-Ubuntu SMP",
	}}, nil
}

func (s *Server) agentExec(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.agentVM(c)
	if err != nil {
		return nil, err
	}
	var argv []string
	switch x := c.params["command"].(type) {
	case []any:
		for _, a := range x {
			argv = append(argv, fmt.Sprint(a))
		}
	case string:
		argv = []string{x}
	}
	input := c.str("input-data")
	if len(argv) == 0 && input == "" {
		return nil, fail500("command or input-data (or both) required")
	}
	if len(input) > 65536 {
		return nil, paramErr(map[string]string{"input-data": "value may only be 65536 characters long"})
	}
	for _, a := range argv {
		if !utf8.ValidString(a) || strings.ContainsFunc(a, func(r rune) bool { return r > 127 }) {
			// Proxmox bugzilla 6609: a non-ASCII guest-exec argument breaks the agent bridge.
			return nil, fail500("Agent error: Guest agent command failed, error was 'Invalid JSON syntax'")
		}
	}
	a := v.agent
	res, ok := a.Commands[strings.Join(argv, " ")]
	if !ok {
		h := a.Handler
		if h == nil {
			h = builtin
		}
		res = h(argv, []byte(input), a.Files)
	}
	if a.execs == nil {
		a.execs = map[int]*execState{}
	}
	a.nextPID++
	a.execs[a.nextPID] = &execState{res: res, done: time.Now().Add(res.Duration)}
	return map[string]any{"pid": a.nextPID}, nil
}

func (s *Server) agentExecStatus(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.agentVM(c)
	if err != nil {
		return nil, err
	}
	pid := c.integer("pid", 0)
	e, ok := v.agent.execs[pid]
	if !ok {
		return nil, fail500("Agent error: PID %d does not exist", pid)
	}
	if time.Now().Before(e.done) {
		return map[string]any{"exited": 0}, nil
	}
	delete(v.agent.execs, pid) // QGA reports an exited PID once
	out := map[string]any{"exited": 1, "exitcode": e.res.ExitCode}
	if e.res.Stdout != "" {
		out["out-data"] = e.res.Stdout
	}
	if e.res.Stderr != "" {
		out["err-data"] = e.res.Stderr
	}
	return out, nil
}

// maxFileWrite is qemu-server's maxLength for file-write content (60 KiB characters).
const maxFileWrite = 61440

func (s *Server) agentFileWrite(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.agentVM(c)
	if err != nil {
		return nil, err
	}
	content := c.str("content")
	if len(content) > maxFileWrite {
		return nil, paramErr(map[string]string{"content": fmt.Sprintf("value may only be %d characters long", maxFileWrite)})
	}
	data := []byte(content)
	if c.has("encode") && !c.boolean("encode") { // encode=0: content is already base64
		data, err = base64.StdEncoding.DecodeString(content)
		if err != nil {
			return nil, fail500("Agent error: Guest agent command failed, error was 'base64 decode failed'")
		}
	}
	v.agent.Files[c.str("file")] = data // guest-file-open mode "w": each write replaces the file
	return nil, nil
}

func (s *Server) agentFileRead(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.agentVM(c)
	if err != nil {
		return nil, err
	}
	path := c.str("file")
	data, ok := v.agent.Files[path]
	if !ok {
		return nil, fail500("Agent error: Failed to open file '%s': No such file or directory", path)
	}
	count := c.integer("count", 16<<20)
	offset := c.integer("offset", 0)
	if offset > len(data) {
		offset = len(data)
	}
	chunk := data[offset:]
	truncated := false
	if len(chunk) > count {
		chunk, truncated = chunk[:count], true
	}
	out := map[string]any{"bytes-read": len(chunk)}
	if !c.has("decode") || c.boolean("decode") {
		// decode=1: bytes become Latin-1 code points in the JSON string (non-UTF-8 safe).
		var b strings.Builder
		for _, by := range chunk {
			b.WriteRune(rune(by))
		}
		out["content"] = b.String()
	} else {
		out["content"] = base64.StdEncoding.EncodeToString(chunk)
	}
	if truncated {
		out["truncated"] = 1
	}
	return out, nil
}

// builtin is a tiny argv interpreter over the guest file map, enough for probe delivery
// (write, verify, run, collect, remove).
func builtin(argv []string, stdin []byte, files map[string][]byte) ExecResult {
	if len(argv) == 3 && (argv[0] == "/bin/sh" || argv[0] == "sh") && argv[1] == "-c" {
		argv = strings.Fields(argv[2])
	}
	if len(argv) == 0 {
		return ExecResult{ExitCode: 127, Stderr: "sh: empty command\n"}
	}
	name := argv[0][strings.LastIndex(argv[0], "/")+1:]
	args := argv[1:]
	switch name {
	case "true":
		return ExecResult{}
	case "false":
		return ExecResult{ExitCode: 1}
	case "echo":
		return ExecResult{Stdout: strings.Join(args, " ") + "\n"}
	case "id":
		return ExecResult{Stdout: "uid=0(root) gid=0(root) groups=0(root)\n"}
	case "uname":
		return ExecResult{Stdout: "Linux\n"}
	case "cat":
		if len(args) == 0 {
			return ExecResult{Stdout: string(stdin)}
		}
		var b strings.Builder
		for _, f := range args {
			d, ok := files[f]
			if !ok {
				return ExecResult{ExitCode: 1, Stdout: b.String(), Stderr: "cat: " + f + ": No such file or directory\n"}
			}
			b.Write(d)
		}
		return ExecResult{Stdout: b.String()}
	case "rm":
		for _, f := range args {
			if !strings.HasPrefix(f, "-") {
				delete(files, f)
			}
		}
		return ExecResult{}
	case "chmod":
		if len(args) == 2 {
			if _, ok := files[args[1]]; !ok {
				return ExecResult{ExitCode: 1, Stderr: "chmod: " + args[1] + ": No such file or directory\n"}
			}
		}
		return ExecResult{}
	case "test":
		if len(args) == 2 && args[0] == "-e" {
			if _, ok := files[args[1]]; ok {
				return ExecResult{}
			}
		}
		return ExecResult{ExitCode: 1}
	case "ls":
		var names []string
		for f := range files {
			names = append(names, f)
		}
		sort.Strings(names)
		return ExecResult{Stdout: strings.Join(names, "\n") + "\n"}
	case "sha256sum":
		var b strings.Builder
		for _, f := range args {
			d, ok := files[f]
			if !ok {
				return ExecResult{ExitCode: 1, Stderr: "sha256sum: " + f + ": No such file or directory\n"}
			}
			sum := sha256.Sum256(d)
			fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), f)
		}
		return ExecResult{Stdout: b.String()}
	case "dd":
		return ddBuiltin(args, files)
	}
	return ExecResult{ExitCode: 127, Stderr: "sh: " + argv[0] + ": not found\n"}
}

// ddBuiltin supports "dd if=A of=B bs=N seek=K conv=notrunc", used to assemble chunked writes.
func ddBuiltin(args []string, files map[string][]byte) ExecResult {
	op := map[string]string{}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		op[k] = v
	}
	src, ok := files[op["if"]]
	if !ok {
		return ExecResult{ExitCode: 1, Stderr: "dd: can't open '" + op["if"] + "': No such file or directory\n"}
	}
	bs, _ := strconv.Atoi(op["bs"])
	if bs <= 0 {
		bs = 512
	}
	seek, _ := strconv.Atoi(op["seek"])
	dst := files[op["of"]]
	off := bs * seek
	if op["conv"] != "notrunc" && len(dst) > off {
		dst = dst[:off]
	}
	if len(dst) < off+len(src) {
		dst = append(dst, make([]byte, off+len(src)-len(dst))...)
	}
	copy(dst[off:], src)
	files[op["of"]] = dst
	return ExecResult{Stderr: fmt.Sprintf("%d bytes copied\n", len(src))}
}

// BuiltinExec runs the built-in command interpreter, for custom Handlers that extend it.
func BuiltinExec(argv []string, stdin []byte, files map[string][]byte) ExecResult {
	return builtin(argv, stdin, files)
}
