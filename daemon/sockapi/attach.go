package sockapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/daemon"
)

// The local workbench attaches to the daemon as an SSH session does, over the socket:
// POST /v1/attach with the terminal's size and type upgrades the connection to a terminal
// stream. The daemon runs the session's program (its fleet, layer, locks and journal; the
// identity is the socket's peer); the client only relays bytes. Server to client: the frames,
// raw. Client to server: messages of a kind byte, a 16-bit big-endian length and the payload —
// input bytes, or a window size (two 16-bit numbers, columns then rows).
const (
	attachUpgrade = "rangekeeper-term/1"
	msgInput      = 'i'
	msgResize     = 'w'
	maxPayload    = 1<<16 - 1
)

// AttachRequest describes the client's terminal.
type AttachRequest struct {
	Cols, Rows int
	Env        []string // TERM, COLORTERM, NO_COLOR...: for the colour profile
}

// AttachOptions bound an attached session's output (0: the SSH sessions' defaults).
type AttachOptions struct {
	OutputFrames int
	FPS          int
}

func (s *Server) handleAttach(w http.ResponseWriter, r *http.Request) {
	who, ok := identity(r)
	if !ok {
		http.Error(w, "refused: only the daemon's own user may use its socket", http.StatusForbidden)
		return
	}
	var req AttachRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	role, ok := s.d.Roster().RoleOf(who)
	if !ok {
		http.Error(w, "refused: "+who.Operator+" has no role", http.StatusForbidden)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "cannot attach: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Time{}) // the header timeout's deadline must not cut the session
	if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+attachUpgrade+"\r\n\r\n"); err != nil {
		return
	}
	hs := s.d.Hub().Join(who, role, func() { conn.Close() })
	defer hs.Leave()

	in, inw := io.Pipe()
	scr, err := s.d.NewScreen(hs, daemon.Terminal{In: in, Out: conn, Env: req.Env, Cols: req.Cols, Rows: req.Rows,
		Frames: s.attach.OutputFrames, FPS: s.attach.FPS})
	if err != nil {
		io.WriteString(conn, "rangekeeper: cannot open the workbench: "+err.Error()+"\r\n")
		return
	}
	go func() {
		// The client's messages; when it goes away the session ends (its actions run on in the
		// daemon and are journaled like any other). When the hub ends the session (shutdown) it
		// closes conn: the relay fails, and the program quits.
		err := relayInput(brw.Reader, inw, scr.Resize)
		inw.CloseWithError(err)
		scr.Quit()
	}()
	scr.Run()
}

// relayInput reads the client's messages until it closes: input goes to in, sizes to resize.
func relayInput(r io.Reader, in io.Writer, resize func(cols, rows int)) error {
	var hdr [3]byte
	buf := make([]byte, maxPayload)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		n := int(binary.BigEndian.Uint16(hdr[1:]))
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return err
		}
		switch hdr[0] {
		case msgInput:
			if _, err := in.Write(buf[:n]); err != nil {
				return err
			}
		case msgResize:
			if n == 4 {
				resize(int(binary.BigEndian.Uint16(buf)), int(binary.BigEndian.Uint16(buf[2:])))
			}
		default:
			return fmt.Errorf("attach: unknown message kind %q", hdr[0])
		}
	}
}

// Attach runs the daemon's workbench in this terminal: it relays in (the terminal's input) and
// the sizes sent on resize to the daemon, and its frames to out, until the session ends (the
// operator quits, the daemon stops or ends the session) or ctx does. The caller puts the
// terminal in raw mode.
func (c *Client) Attach(ctx context.Context, req AttachRequest, in io.Reader, out io.Writer, resize <-chan [2]int) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		return fmt.Errorf("daemon socket %s: %w", c.path, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	body, _ := json.Marshal(req)
	hr, _ := http.NewRequest(http.MethodPost, "http://rangekeeper/v1/attach", bytes.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Connection", "Upgrade")
	hr.Header.Set("Upgrade", attachUpgrade)
	if err := hr.Write(conn); err != nil {
		return fmt.Errorf("daemon socket %s: %w", c.path, err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, hr)
	if err != nil {
		return fmt.Errorf("daemon socket %s: %w", c.path, err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		res.Body.Close()
		return fmt.Errorf("daemon socket %s: %s: %s", c.path, res.Status, strings.TrimSpace(string(msg)))
	}
	var wmu sync.Mutex
	send := func(kind byte, p []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		msg := make([]byte, 3, 3+len(p))
		msg[0] = kind
		binary.BigEndian.PutUint16(msg[1:], uint16(len(p)))
		_, err := conn.Write(append(msg, p...))
		return err
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 && send(msgInput, buf[:n]) != nil {
				return
			}
			if err != nil {
				// No more input (a pipe closed): say so, the session ends.
				if cw, ok := conn.(interface{ CloseWrite() error }); ok {
					cw.CloseWrite()
				}
				return
			}
		}
	}()
	go func() {
		for sz := range resize {
			var p [4]byte
			binary.BigEndian.PutUint16(p[:], uint16(min(max(sz[0], 0), maxPayload)))
			binary.BigEndian.PutUint16(p[2:], uint16(min(max(sz[1], 0), maxPayload)))
			if send(msgResize, p[:]) != nil {
				return
			}
		}
	}()
	_, err = io.Copy(out, br)
	if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
