package theme

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Paint is a style reduced to its opening and closing escape sequences, so hot paths (one table
// row per line per frame) colour text with two string concatenations instead of a full
// lipgloss layout pass. Only for styles without width, padding, margins or borders.
type Paint struct{ pre, post string }

// NewPaint captures st's escape sequences.
func NewPaint(st lipgloss.Style) Paint {
	const mark = "\x01"
	out := st.Render(mark)
	i := strings.Index(out, mark)
	if i < 0 {
		return Paint{}
	}
	return Paint{pre: out[:i], post: out[i+len(mark):]}
}

// S colours s.
func (p Paint) S(s string) string {
	if p.pre == "" && p.post == "" {
		return s
	}
	return p.pre + s + p.post
}
