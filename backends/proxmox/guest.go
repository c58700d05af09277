package proxmox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/rangekeeper/rangekeeper/backends"
)

const (
	// chunkRaw is the most raw bytes one file-write can carry: base64 of 46,080 bytes is exactly
	// PVE's 61,440-character cap on "content".
	chunkRaw = 46080
	// readChunk is how much one file-read asks for with count/offset.
	readChunk = 1 << 20
	// maxInput is PVE's cap on exec input-data.
	maxInput = 64 * 1024
)

// pickMember resolves a member by name, VM id or service; empty means Inspect's "default" VM
// if present, else the first running VM.
func pickMember(refs []vmRef, member string) (vmRef, error) {
	if member != "" {
		for _, r := range refs {
			if r.name == member || strconv.Itoa(r.vmid) == member {
				return r, nil
			}
		}
		return vmRef{}, fmt.Errorf("no VM %q in this sandbox", member)
	}
	for _, r := range refs {
		if r.name == "default" {
			return r, nil
		}
	}
	for _, r := range refs {
		if r.res.Status == "running" {
			return r, nil
		}
	}
	if len(refs) > 0 {
		return refs[0], nil
	}
	return vmRef{}, errors.New("sandbox has no VMs")
}

func (b *Backend) guest(ctx context.Context, sandboxID, member string) (vmRef, *pve.VirtualMachine, error) {
	_, refs, err := b.resolve(ctx, sandboxID, false)
	if err != nil {
		return vmRef{}, nil, err
	}
	r, err := pickMember(refs, member)
	if err != nil {
		return vmRef{}, nil, fmt.Errorf("%s: %w", sandboxID, err)
	}
	if !agentEnabled(str(r.conf["agent"])) {
		return r, nil, fmt.Errorf("%s has no QEMU guest agent configured (agent: 1)", vmLabel(r))
	}
	return r, b.client.NodeRef(r.node).VirtualMachineRef(r.vmid), nil
}

// Exec runs a command through the guest agent (exec, then exec-status polled until exited).
// QGA reports a finished PID once: if that answer is lost, the result is gone and Exec says so.
func (b *Backend) Exec(ctx context.Context, sandboxID string, req backends.ExecRequest) (backends.ExecResult, error) {
	if len(req.Cmd) == 0 {
		return backends.ExecResult{}, errors.New("exec: empty command")
	}
	if req.User != "" || req.WorkDir != "" || len(req.Env) > 0 {
		return backends.ExecResult{}, errors.New("exec: user, working directory and environment are not supported by the Proxmox guest-agent API; wrap the command in a shell")
	}
	var input string
	if req.Stdin != nil {
		data, err := io.ReadAll(io.LimitReader(req.Stdin, maxInput+1))
		if err != nil {
			return backends.ExecResult{}, fmt.Errorf("exec: read stdin: %w", err)
		}
		if len(data) > maxInput {
			return backends.ExecResult{}, fmt.Errorf("exec: stdin larger than PVE's %d-byte input-data limit", maxInput)
		}
		input = string(data)
	}
	r, vm, err := b.guest(ctx, sandboxID, req.Member)
	if err != nil {
		return backends.ExecResult{}, err
	}
	return b.run(ctx, r, vm, req.Cmd, input, req.Timeout)
}

func (b *Backend) run(ctx context.Context, r vmRef, vm *pve.VirtualMachine, argv []string, input string, timeout time.Duration) (backends.ExecResult, error) {
	what := "exec " + strings.Join(argv, " ") + " in " + vmLabel(r)
	pid, err := vm.AgentExec(ctx, argv, input)
	if err != nil {
		return backends.ExecResult{}, fmt.Errorf("%s: %s", what, apiMessage(err))
	}
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	deadline := time.Now().Add(timeout)
	delay, failures := 20*time.Millisecond, 0
	for {
		st, err := vm.AgentExecStatus(ctx, pid)
		switch {
		case err == nil:
			failures = 0
			if st.Exited != 0 {
				res := backends.ExecResult{ExitCode: st.ExitCode, Stdout: []byte(st.OutData), Stderr: []byte(st.ErrData)}
				if st.Signal != 0 && st.ExitCode == 0 {
					res.ExitCode = 128 + st.Signal
				}
				return res, nil
			}
		case ctx.Err() != nil:
			return backends.ExecResult{}, fmt.Errorf("%s: %w", what, ctx.Err())
		case strings.Contains(apiMessage(err), "does not exist"):
			return backends.ExecResult{}, fmt.Errorf("%s: the guest agent no longer knows pid %d: its result was already read once (an answer was lost) and cannot be read again", what, pid)
		case transient(err) && failures < 8:
			failures++
		default:
			return backends.ExecResult{}, fmt.Errorf("%s: status of pid %d: %s", what, pid, apiMessage(err))
		}
		if time.Now().After(deadline) {
			return backends.ExecResult{TimedOut: true, ExitCode: -1}, nil
		}
		if err := sleep(ctx, delay); err != nil {
			return backends.ExecResult{}, fmt.Errorf("%s: %w", what, err)
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// CopyTo writes a file in the guest: one file-write per 46,080-byte chunk (PVE caps content at
// 61,440 characters and each write replaces the file), assembled with dd, chmod'ed, then
// verified by sha256sum (or by reading it back when the guest has no sha256sum).
func (b *Backend) CopyTo(ctx context.Context, sandboxID, member, path string, data []byte, mode int64) error {
	if path == "" || !strings.HasPrefix(path, "/") {
		return fmt.Errorf("copy: guest path %q must be absolute", path)
	}
	r, vm, err := b.guest(ctx, sandboxID, member)
	if err != nil {
		return err
	}
	what := "write " + path + " in " + vmLabel(r)
	if err := vm.AgentFileWrite(ctx, path, data[:min(len(data), chunkRaw)]); err != nil {
		return fmt.Errorf("%s: %s", what, apiMessage(err))
	}
	part := path + ".rkpart"
	for i := 1; i*chunkRaw < len(data); i++ {
		chunk := data[i*chunkRaw : min(len(data), (i+1)*chunkRaw)]
		if err := vm.AgentFileWrite(ctx, part, chunk); err != nil {
			return fmt.Errorf("%s: chunk %d: %s", what, i, apiMessage(err))
		}
		if err := b.mustRun(ctx, r, vm, what, "dd", "if="+part, "of="+path, "bs="+strconv.Itoa(chunkRaw), "seek="+strconv.Itoa(i), "conv=notrunc"); err != nil {
			return err
		}
	}
	if len(data) > chunkRaw {
		if err := b.mustRun(ctx, r, vm, what, "rm", "-f", part); err != nil {
			return err
		}
	}
	if mode != 0 {
		if err := b.mustRun(ctx, r, vm, what, "chmod", strconv.FormatInt(mode&0o7777, 8), path); err != nil {
			return err
		}
	}
	return b.verify(ctx, r, vm, path, data)
}

func (b *Backend) mustRun(ctx context.Context, r vmRef, vm *pve.VirtualMachine, what string, argv ...string) error {
	res, err := b.run(ctx, r, vm, argv, "", time.Minute)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		return fmt.Errorf("%s: %s exited %d: %s", what, argv[0], res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}

func (b *Backend) verify(ctx context.Context, r vmRef, vm *pve.VirtualMachine, path string, data []byte) error {
	want := sha256.Sum256(data)
	res, err := b.run(ctx, r, vm, []string{"sha256sum", path}, "", time.Minute)
	if err == nil && res.ExitCode == 0 {
		got, _, _ := strings.Cut(string(res.Stdout), " ")
		if got != hex.EncodeToString(want[:]) {
			return fmt.Errorf("write %s in %s: verification failed: guest sha256 %s, want %s", path, vmLabel(r), got, hex.EncodeToString(want[:]))
		}
		return nil
	}
	back, rerr := b.readFile(ctx, r, vm, path)
	if rerr != nil {
		return fmt.Errorf("write %s in %s: verify: %w", path, vmLabel(r), rerr)
	}
	if !bytes.Equal(back, data) {
		return fmt.Errorf("write %s in %s: verification failed: read back %d bytes differing from the %d written", path, vmLabel(r), len(back), len(data))
	}
	return nil
}

// CopyFrom reads a guest file with file-read count/offset (PVE ≥ 9.2, not in go-proxmox), falling
// back to go-proxmox's single read with Latin-1 recovery on older PVE.
func (b *Backend) CopyFrom(ctx context.Context, sandboxID, member, path string) ([]byte, error) {
	r, vm, err := b.guest(ctx, sandboxID, member)
	if err != nil {
		return nil, err
	}
	return b.readFile(ctx, r, vm, path)
}

// fileReadPage is file-read's answer with decode=0.
type fileReadPage struct {
	Content   string        `json:"content"`
	BytesRead int           `json:"bytes-read"`
	Truncated pve.IntOrBool `json:"truncated"`
}

func (b *Backend) readFile(ctx context.Context, r vmRef, vm *pve.VirtualMachine, path string) ([]byte, error) {
	what := "read " + path + " in " + vmLabel(r)
	var out []byte
	for offset := 0; ; {
		q := url.Values{"file": {path}, "count": {strconv.Itoa(readChunk)}, "offset": {strconv.Itoa(offset)}, "decode": {"0"}}
		var page fileReadPage
		err := b.get(ctx, r.path()+"/agent/file-read?"+q.Encode(), &page)
		var ae *pve.APIError
		if errors.As(err, &ae) && ae.StatusCode == 400 && offset == 0 {
			return b.readFileLegacy(ctx, vm, path, what) // PVE < 9.2: no count/offset/decode
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s", what, apiMessage(err))
		}
		chunk, err := base64.StdEncoding.DecodeString(page.Content)
		if err != nil {
			return nil, fmt.Errorf("%s: file-read content is not base64: %w", what, err)
		}
		out = append(out, chunk...)
		offset += len(chunk)
		if !bool(page.Truncated) || len(chunk) == 0 {
			return out, nil
		}
	}
}

// readFileLegacy uses go-proxmox's AgentFileRead (decode=1): bytes arrive as Latin-1 code points.
func (b *Backend) readFileLegacy(ctx context.Context, vm *pve.VirtualMachine, path, what string) ([]byte, error) {
	fr, err := vm.AgentFileRead(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", what, apiMessage(err))
	}
	if fr.Truncated {
		return nil, fmt.Errorf("%s: file larger than one legacy file-read (16 MiB); upgrade PVE to 9.2 for offset reads", what)
	}
	return latin1Bytes(fr.Content)
}

// latin1Bytes reverses decode=1: each rune is one byte.
func latin1Bytes(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("file-read content has code point U+%04X above Latin-1", r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}
