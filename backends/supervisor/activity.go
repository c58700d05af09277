package supervisor

import (
	"sync"

	"github.com/rangekeeper/rangekeeper/backends"
)

// MaxActivity bounds the activity log: a reader that falls further behind than this loses the
// oldest entries and is told so (the gap), so memory stays bounded whatever the event rate.
var MaxActivity = 20_000

// activityLog is a ring of the backends' Activity with a monotonic sequence number, read with a
// cursor: any number of readers (the timeline recorder, the drift detector, a view) follow it
// at their own pace and nobody's slowness blocks a backend.
type activityLog struct {
	mu     sync.Mutex
	ring   []backends.Activity
	next   uint64 // sequence number of the next entry; entry n sits at ring[n % len(ring)]
	notify chan struct{}
}

func (l *activityLog) add(a backends.Activity) {
	l.mu.Lock()
	if l.ring == nil {
		l.ring = make([]backends.Activity, MaxActivity)
	}
	l.ring[l.next%uint64(len(l.ring))] = a
	l.next++
	ch := l.notify
	l.notify = nil
	l.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// Activity returns the entries logged at or after cursor (oldest first), the cursor to pass next
// time, and how many entries were lost because the reader fell more than MaxActivity behind.
// Cursor 0 starts at the oldest entry still held.
func (s *Supervisor) Activity(cursor uint64) (out []backends.Activity, next uint64, lost uint64) {
	l := &s.activity
	l.mu.Lock()
	defer l.mu.Unlock()
	oldest := uint64(0)
	if n := uint64(len(l.ring)); l.next > n {
		oldest = l.next - n
	}
	if cursor < oldest {
		if cursor > 0 {
			lost = oldest - cursor
		}
		cursor = oldest
	}
	for i := cursor; i < l.next; i++ {
		out = append(out, l.ring[i%uint64(len(l.ring))])
	}
	return out, l.next, lost
}

// ActivityNotify returns a channel closed when the next activity is logged: wait on it, then
// read with Activity.
func (s *Supervisor) ActivityNotify() <-chan struct{} {
	l := &s.activity
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.notify == nil {
		l.notify = make(chan struct{})
	}
	return l.notify
}
