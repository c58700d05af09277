package sockapi

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func msg(kind byte, p ...byte) []byte {
	m := []byte{kind, 0, 0}
	binary.BigEndian.PutUint16(m[1:], uint16(len(p)))
	return append(m, p...)
}

// TestRelayInputSplitsKeysAndSizes: the attach stream's messages reach the program as keys and
// window sizes, in order; an unknown kind or a cut message ends the session with an error.
func TestRelayInputSplitsKeysAndSizes(t *testing.T) {
	size := func(c, r uint16) []byte {
		var p [4]byte
		binary.BigEndian.PutUint16(p[:], c)
		binary.BigEndian.PutUint16(p[2:], r)
		return p[:]
	}
	cases := []struct {
		name    string
		stream  []byte
		keys    string
		sizes   [][2]int
		wantErr bool
	}{
		{"keys", append(msg(msgInput, 'j', 'k'), msg(msgInput, 'q')...), "jkq", nil, false},
		{"sizes between keys", bytes.Join([][]byte{msg(msgInput, '?'), msg(msgResize, size(120, 30)...), msg(msgInput, 'q')}, nil), "?q", [][2]int{{120, 30}}, false},
		{"a size of the wrong length is ignored", msg(msgResize, 1, 2), "", nil, false},
		{"empty stream", nil, "", nil, false},
		{"unknown kind", msg('x', 1), "", nil, true},
		{"cut payload", msg(msgInput, 'a', 'b')[:4], "", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var keys bytes.Buffer
			var sizes [][2]int
			err := relayInput(bytes.NewReader(c.stream), &keys, func(cols, rows int) { sizes = append(sizes, [2]int{cols, rows}) })
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if c.wantErr {
				return
			}
			if keys.String() != c.keys {
				t.Errorf("keys = %q, want %q", keys.String(), c.keys)
			}
			if len(sizes) != len(c.sizes) || (len(sizes) > 0 && sizes[0] != c.sizes[0]) {
				t.Errorf("sizes = %v, want %v", sizes, c.sizes)
			}
		})
	}
}
