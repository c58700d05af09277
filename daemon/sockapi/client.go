package sockapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Client talks to a daemon's socket.
type Client struct {
	path string
	hc   *http.Client
}

// NewClient is a client of the socket at path.
func NewClient(path string) *Client {
	return &Client{path: path, hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}}}
}

// Available reports whether a daemon answers on the socket at path.
func Available(path string) bool {
	c, err := net.DialTimeout("unix", path, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Run sends a command line and copies its output; it returns the command's exit status.
func (c *Client) Run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	body, _ := json.Marshal(map[string]any{"args": args})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://rangekeeper/v1/run", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("daemon socket %s: %w", c.path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return 0, fmt.Errorf("daemon socket %s: %s: %s", c.path, res.Status, strings.TrimSpace(string(msg)))
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var f Frame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return 0, fmt.Errorf("daemon socket %s: bad frame: %w", c.path, err)
		}
		io.WriteString(stdout, f.Out)
		io.WriteString(stderr, f.Err)
		if f.Exit != nil {
			return *f.Exit, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("daemon socket %s: %w", c.path, err)
	}
	return 0, fmt.Errorf("daemon socket %s: the daemon ended the command without an exit status", c.path)
}

// Events calls fn with each event of the feed until fn returns false or ctx ends.
func (c *Client) Events(ctx context.Context, fn func(Event) bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://rangekeeper/v1/events", nil)
	if err != nil {
		return err
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("daemon socket %s: %w", c.path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("daemon socket %s: %s", c.path, res.Status)
	}
	dec := json.NewDecoder(res.Body)
	for {
		var ev Event
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("daemon socket %s: %w", c.path, err)
		}
		if !fn(ev) {
			return nil
		}
	}
}
