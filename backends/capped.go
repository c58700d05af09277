package backends

import "bytes"

// CappedBuffer keeps the first Max bytes written and drops the rest, remembering that it did:
// the output of a command in a sandbox or of a helper process, which must not grow without bound.
type CappedBuffer struct {
	bytes.Buffer
	Max     int
	dropped bool
}

// Write keeps what fits under Max and reports all of p written, so a writer never fails on it.
func (c *CappedBuffer) Write(p []byte) (int, error) {
	if room := c.Max - c.Len(); room < len(p) {
		c.dropped = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// Dropped reports whether any bytes were dropped.
func (c *CappedBuffer) Dropped() bool { return c.dropped }
