package logs

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
)

// Source opens the log stream the screen shows (the program binds it to a backend's LogReader;
// tests give an in-memory one). It runs in a command, never in Update.
type Source func(ctx context.Context) (backends.LogStream, error)

// FrameEvery is the shortest time between two batches delivered to Update: at any line rate
// the screen costs at most this many updates a second, each folding a whole batch.
var FrameEvery = 33 * time.Millisecond

// feed pumps a stream off the UI goroutine into a staging buffer bounded by the ring's size
// (older staged lines are dropped: the ring would drop them anyway), and hands batches to Update
// through a command. Memory is at most two rings' worth of lines whatever the rate.
type feed struct {
	max    int
	notify chan struct{}

	mu      sync.Mutex
	staged  []backends.LogLine
	dropped uint64 // lines dropped from the stage since the last batch
	err     error
	ended   bool
}

// batchMsg carries staged lines to the screen that owns f.
type batchMsg struct {
	f       *feed
	lines   []backends.LogLine
	dropped uint64
	err     error
	ended   bool
}

// openedMsg reports the stream opened (or why not).
type openedMsg struct {
	f   *feed
	err error
}

func newFeed(max int) *feed { return &feed{max: max, notify: make(chan struct{}, 1)} }

// run opens the stream and pumps it until it ends or ctx is done.
func (f *feed) run(ctx context.Context, src Source) tea.Cmd {
	return func() tea.Msg {
		s, err := src(ctx)
		if err != nil {
			return openedMsg{f: f, err: err}
		}
		go f.pump(ctx, s)
		return openedMsg{f: f}
	}
}

func (f *feed) pump(ctx context.Context, s backends.LogStream) {
	defer s.Close()
	go func() { <-ctx.Done(); s.Close() }()
	for {
		l, err := s.Next()
		f.mu.Lock()
		if err != nil {
			f.ended = true
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				f.err = err
			}
		} else {
			if len(f.staged) >= 2*f.max { // keep the newest max lines, amortised
				n := copy(f.staged, f.staged[len(f.staged)-f.max:])
				f.dropped += uint64(len(f.staged) - n)
				f.staged = f.staged[:n]
			}
			f.staged = append(f.staged, l)
		}
		f.mu.Unlock()
		select {
		case f.notify <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// wait is the subscription: it blocks until lines are staged (then lets a frame's worth gather)
// and delivers them as one batch.
func (f *feed) wait(ctx context.Context) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-ctx.Done():
			return nil
		case <-f.notify:
		}
		t := time.NewTimer(FrameEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		return f.take()
	}
}

func (f *feed) take() batchMsg {
	f.mu.Lock()
	defer f.mu.Unlock()
	lines := f.staged
	if len(lines) > f.max {
		f.dropped += uint64(len(lines) - f.max)
		lines = lines[len(lines)-f.max:]
	}
	msg := batchMsg{f: f, lines: lines, dropped: f.dropped, err: f.err, ended: f.ended}
	f.staged, f.dropped = nil, 0
	return msg
}

// unread puts a batch back in front of the stage (it arrived while the screen was paused).
func (f *feed) unread(b batchMsg) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.staged = append(append([]backends.LogLine(nil), b.lines...), f.staged...)
	f.dropped += b.dropped
	if len(f.staged) > f.max {
		f.dropped += uint64(len(f.staged) - f.max)
		f.staged = f.staged[len(f.staged)-f.max:]
	}
	if b.err != nil && f.err == nil {
		f.err = b.err
	}
	f.ended = f.ended || b.ended
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

// staging is how many lines wait for the screen (tests).
func (f *feed) staging() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.staged)
}
