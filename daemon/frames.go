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
//
// A shell needs the opposite, a stream where nothing is lost: Hold lets one write straight to
// the client for a while, after the frames queued before it.
type FrameWriter struct {
	w        io.Writer
	ch       chan []byte
	dropped  atomic.Bool
	held     atomic.Bool
	holds    chan hold
	OnResume func() // set before the first write
	once     sync.Once
	done     chan struct{}
	exited   chan struct{} // the copying goroutine has returned
}

// hold is one Hold: the copier closes ready once the queue reached the client, waits for back,
// and closes resumed once it copies frames again.
type hold struct{ ready, back, resumed chan struct{} }

// NewFrameWriter copies frames to w, holding at most max of them.
func NewFrameWriter(w io.Writer, max int) *FrameWriter {
	f := &FrameWriter{w: w, ch: make(chan []byte, max), holds: make(chan hold), done: make(chan struct{}), exited: make(chan struct{})}
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
	if f.held.Load() {
		// Someone else writes to the client; the full redraw at Release makes up for this.
		return len(p), nil
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
	defer close(f.exited)
	for {
		select {
		case <-f.done:
			return
		case h := <-f.holds:
			if !f.stand(h) {
				return
			}
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

// stand writes the frames queued before hold h, then stays out of the way until it ends. The
// frames a racing Write queued meanwhile are older than what the holder wrote: they are
// discarded, the redraw at Release replaces them. false: the copying is over.
func (f *FrameWriter) stand(h hold) bool {
	for len(f.ch) > 0 {
		if _, err := f.w.Write(<-f.ch); err != nil {
			return false // the holder finds the client gone on its own first write
		}
	}
	close(h.ready)
	select {
	case <-f.done:
		return false
	case <-h.back:
	}
	for len(f.ch) > 0 {
		<-f.ch
	}
	f.dropped.Store(false)
	close(h.resumed)
	return true
}

// Hold stops the frames once those queued have reached the client, so that the caller may
// write to the client itself (a shell's output: in order, nothing dropped). Frames written
// until release are discarded; release resumes them with a full redraw (OnResume), since the
// screen is no longer the program's.
func (f *FrameWriter) Hold() (release func()) {
	f.held.Store(true)
	h := hold{ready: make(chan struct{}), back: make(chan struct{}), resumed: make(chan struct{})}
	select {
	case f.holds <- h:
		select {
		case <-h.ready:
		case <-f.exited:
		}
	case <-f.exited:
	case <-f.done:
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(h.back)
			select {
			case <-h.resumed:
			case <-f.exited:
			}
			f.held.Store(false)
			if f.OnResume != nil {
				f.OnResume()
			}
		})
	}
}

// Close ends the copying; later writes are discarded.
func (f *FrameWriter) Close() { f.once.Do(func() { close(f.done) }) }
