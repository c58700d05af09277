package daemon

import (
	"io"
	"sync"
	"sync/atomic"
)

// FrameWriter decouples a session program's renderer from its client: each write (a frame) is
// queued, at most max of them, and a goroutine copies them to the client (an SSH channel, a
// socket). When the client does not
// read (frozen, or on a slow link) the queue fills and frames are dropped, never waited for: the
// renderer, and so the program, keeps going. Once the client drains the queue, OnResume asks for
// a full redraw, since the dropped frames' changes never reached it.
type FrameWriter struct {
	w        io.Writer
	ch       chan []byte
	dropped  atomic.Bool
	OnResume func() // set before the first write
	once     sync.Once
	done     chan struct{}
}

// NewFrameWriter copies frames to w, holding at most max of them.
func NewFrameWriter(w io.Writer, max int) *FrameWriter {
	f := &FrameWriter{w: w, ch: make(chan []byte, max), done: make(chan struct{})}
	go f.loop()
	return f
}

func (f *FrameWriter) Write(p []byte) (int, error) {
	select {
	case <-f.done:
		// The session has ended and its program is stopping: its last frames go nowhere. An
		// error here would only make Bubble Tea (v2.2+) log the session's end as a failure.
		return len(p), nil
	default:
	}
	b := append([]byte(nil), p...)
	select {
	case f.ch <- b:
	default:
		f.dropped.Store(true)
	}
	return len(p), nil
}

func (f *FrameWriter) loop() {
	for {
		select {
		case <-f.done:
			return
		case b := <-f.ch:
			if _, err := f.w.Write(b); err != nil {
				return
			}
			if len(f.ch) == 0 && f.dropped.Swap(false) && f.OnResume != nil {
				f.OnResume()
			}
		}
	}
}

// Close ends the copying; later writes are discarded.
func (f *FrameWriter) Close() { f.once.Do(func() { close(f.done) }) }
