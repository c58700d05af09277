// Package logring keeps the most recent lines of a log in a fixed-size ring, so a member that
// prints without pause can never grow the reader: the oldest lines are dropped and counted.
package logring

import (
	"strings"

	"github.com/rangekeeper/rangekeeper/backends"
)

// DefaultSize is the number of lines kept when the config says nothing.
const DefaultSize = 10_000

// Line is one kept line.
type Line struct {
	Seq    uint64 // position in the whole stream (0 is the first line ever added)
	Member string
	Stream string
	Text   string
	Time   int64 // unix nanoseconds
}

// Ring is a bounded log. Not safe for concurrent use: its owner (one screen, one command)
// serialises access.
type Ring struct {
	lines []Line
	next  uint64 // sequence number of the next line
}

// New returns a ring keeping size lines (DefaultSize when size <= 0).
func New(size int) *Ring {
	if size <= 0 {
		size = DefaultSize
	}
	return &Ring{lines: make([]Line, size)}
}

// Cap is the number of lines the ring keeps.
func (r *Ring) Cap() int { return len(r.lines) }

// Len is the number of lines held.
func (r *Ring) Len() int { return int(min(r.next, uint64(len(r.lines)))) }

// Total is the number of lines ever added.
func (r *Ring) Total() uint64 { return r.next }

// Dropped is the number of lines pushed out by newer ones.
func (r *Ring) Dropped() uint64 { return r.next - uint64(r.Len()) }

// Add appends one line, dropping the oldest when full.
func (r *Ring) Add(member, stream, text string, unixNano int64) {
	r.lines[r.next%uint64(len(r.lines))] = Line{Seq: r.next, Member: member, Stream: stream, Text: text, Time: unixNano}
	r.next++
}

// AddLine appends a backend's line.
func (r *Ring) AddLine(l backends.LogLine) { r.Add(l.Member, l.Stream, l.Text, l.Time.UnixNano()) }

// At returns the i-th held line, 0 being the oldest.
func (r *Ring) At(i int) Line {
	first := r.next - uint64(r.Len())
	return r.lines[(first+uint64(i))%uint64(len(r.lines))]
}

// Find returns the index of the first held line at or after from (forward) or at or before from
// (backward) whose text contains q, ignoring case; -1 when none. The search wraps around.
func (r *Ring) Find(q string, from int, forward bool) int {
	n := r.Len()
	if n == 0 || q == "" {
		return -1
	}
	q = strings.ToLower(q)
	from = max(0, min(from, n-1))
	for k := range n {
		i := from + k
		if !forward {
			i = from - k
		}
		i = ((i % n) + n) % n
		if containsFold(r.At(i).Text, q) {
			return i
		}
	}
	return -1
}

// containsFold reports whether s contains the lower-case q, ignoring ASCII case without
// allocating for the common all-ASCII line.
func containsFold(s, q string) bool {
	if len(q) > len(s) {
		return false
	}
	for i := 0; i+len(q) <= len(s); i++ {
		j := 0
		for ; j < len(q); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != q[j] {
				break
			}
		}
		if j == len(q) {
			return true
		}
	}
	return strings.Contains(strings.ToLower(s), q) && hasNonASCII(s)
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}
