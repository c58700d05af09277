package sshd

import (
	"io"
	"sync"
	"sync/atomic"
)

// frameWriter decouples a program's renderer from its client: each write (a frame) is queued,
// at most max of them, and a goroutine copies them to the SSH channel. When the client does not
// read (frozen, or on a slow link) the queue fills and frames are dropped, never waited for: the
// renderer, and so the program, keeps going. Once the client drains the queue, onResume asks for
// a full redraw, since the dropped frames' changes never reached it.
type frameWriter struct {
	w        io.Writer
	ch       chan []byte
	dropped  atomic.Bool
	onResume func()
	once     sync.Once
	done     chan struct{}
}

func newFrameWriter(w io.Writer, max int) *frameWriter {
	f := &frameWriter{w: w, ch: make(chan []byte, max), done: make(chan struct{})}
	go f.loop()
	return f
}

func (f *frameWriter) Write(p []byte) (int, error) {
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

func (f *frameWriter) loop() {
	for {
		select {
		case <-f.done:
			return
		case b := <-f.ch:
			if _, err := f.w.Write(b); err != nil {
				return
			}
			if len(f.ch) == 0 && f.dropped.Swap(false) && f.onResume != nil {
				f.onResume()
			}
		}
	}
}

func (f *frameWriter) close() { f.once.Do(func() { close(f.done) }) }
