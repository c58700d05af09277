package fleet

// lineCache keeps the table lines of the last frame, so a frame that moves the cursor by one
// row rebuilds two lines rather than every visible one (the rest of a key press's cost is the
// renderer's). Rows are immutable, so a row pointer plus everything else a line shows is an
// exact key; lines not shown in a frame are dropped with the frame after it.
type lineCache struct {
	prev, cur map[lineKey]string
}

// lineKey is everything rowLine's output depends on.
type lineKey struct {
	row                        *Row
	selected, marked, expanded bool
	flag, activity, age, theme string
	width                      int
}

// frame starts a frame: lines the last frame used stay reachable, older ones go.
func (c *lineCache) frame() {
	c.prev, c.cur = c.cur, c.prev
	if c.cur == nil {
		c.cur = make(map[lineKey]string, 64)
	}
	clear(c.cur)
}

func (c *lineCache) get(k lineKey) (string, bool) {
	if s, ok := c.cur[k]; ok {
		return s, true
	}
	s, ok := c.prev[k]
	if ok {
		c.cur[k] = s
	}
	return s, ok
}

func (c *lineCache) put(k lineKey, s string) { c.cur[k] = s }
