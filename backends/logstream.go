package backends

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"
)

// ChanStream is a LogStream fed by any number of producers (one per member): lines arrive in
// the order producers send them, and a full buffer blocks the producers (back-pressure to the
// engine's connection) rather than growing memory. Backends build their streams on it.
type ChanStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	lines  chan LogLine
	wg     sync.WaitGroup
	done   chan struct{}

	mu  sync.Mutex
	err error // the first producer error, reported after the lines
}

// NewChanStream returns a stream whose producers stop when ctx ends or Close is called.
func NewChanStream(ctx context.Context) *ChanStream {
	ctx, cancel := context.WithCancel(ctx)
	s := &ChanStream{ctx: ctx, cancel: cancel, lines: make(chan LogLine, 1024), done: make(chan struct{})}
	return s
}

// Context is the producers' context: it ends when the stream is closed.
func (s *ChanStream) Context() context.Context { return s.ctx }

// Go runs one producer; its error (other than the context's) ends up after the lines.
func (s *ChanStream) Go(produce func(ctx context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := produce(s.ctx); err != nil && s.ctx.Err() == nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
		}
	}()
}

// Start closes the line channel once every producer started so far has returned; call it
// after the last Go.
func (s *ChanStream) Start() {
	go func() {
		s.wg.Wait()
		close(s.lines)
	}()
}

// Send delivers one line; false when the stream was closed.
func (s *ChanStream) Send(l LogLine) bool {
	select {
	case s.lines <- l:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// Next implements LogStream.
func (s *ChanStream) Next() (LogLine, error) {
	l, ok := <-s.lines
	if ok {
		return l, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return LogLine{}, s.err
	}
	if err := s.ctx.Err(); err != nil {
		return LogLine{}, err
	}
	return LogLine{}, io.EOF
}

// Close implements LogStream.
func (s *ChanStream) Close() error {
	s.cancel()
	return nil
}

// LineWriter splits what is written to it into lines for a stream: one per newline, a carriage
// return before it dropped, lines longer than MaxLogLine cut (the rest of that line discarded).
// With Stamped, each line starts with an RFC 3339 time and a space (the engines' timestamps
// option), which becomes the line's Time.
type LineWriter struct {
	Send    func(LogLine) bool
	Member  string
	Stream  string
	Stamped bool
	Last    time.Time // the time of the last line sent
	buf     []byte
	cut     bool
}

// Write implements io.Writer; it fails with io.ErrClosedPipe once Send refuses.
func (w *LineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := MaxLogLine + 40 - len(w.buf); room < len(chunk) { // 40: room for a timestamp
			w.buf = append(w.buf, chunk[:max(room, 0)]...)
			w.cut = true
		} else {
			w.buf = append(w.buf, chunk...)
		}
		if i < 0 {
			break
		}
		p = p[i+1:]
		if !w.emit() {
			return n - len(p), io.ErrClosedPipe
		}
	}
	return n, nil
}

// Flush sends a last line that had no newline.
func (w *LineWriter) Flush() {
	if len(w.buf) > 0 {
		w.emit()
	}
}

func (w *LineWriter) emit() bool {
	b := bytes.TrimSuffix(w.buf, []byte("\r"))
	l := LogLine{Member: w.Member, Stream: w.Stream, Cut: w.cut}
	if w.Stamped {
		if sp := bytes.IndexByte(b, ' '); sp > 0 {
			if t, err := time.Parse(time.RFC3339Nano, string(b[:sp])); err == nil {
				l.Time, b = t, b[sp+1:]
			}
		} else if t, err := time.Parse(time.RFC3339Nano, string(b)); err == nil {
			l.Time, b = t, nil
		}
	}
	if len(b) > MaxLogLine {
		b, l.Cut = b[:MaxLogLine], true
	}
	l.Text = string(b)
	if l.Time.IsZero() {
		l.Time = time.Now()
	}
	w.buf, w.cut = w.buf[:0], false
	w.Last = l.Time
	return w.Send(l)
}
