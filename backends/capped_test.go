package backends

import "testing"

func TestCappedBufferKeepsTheFirstMaxBytes(t *testing.T) {
	c := &CappedBuffer{Max: 5}
	for _, p := range []string{"abc", "defg", "h"} {
		if n, err := c.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want all of it taken", p, n, err)
		}
	}
	if c.String() != "abcde" || !c.Dropped() {
		t.Fatalf("kept %q, dropped %v; want \"abcde\", true", c.String(), c.Dropped())
	}
	full := &CappedBuffer{Max: 5}
	full.Write([]byte("abcde"))
	if full.Dropped() {
		t.Fatal("exactly Max bytes counted as dropped")
	}
}
