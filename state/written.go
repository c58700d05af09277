package state

import (
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// NotifiedPoll is how often a reader that waits on Written still looks at the file: the
// notifications are best effort (a network file system may not report another host's writes).
const NotifiedPoll = 30 * time.Second

// writeNotifier turns the operating system's file-change notifications for the state file
// (inotify, kqueue, ReadDirectoryChangesW, through fsnotify) into a broadcast channel, so the
// workbench follows other processes' writes without waking every second to stat the file.
type writeNotifier struct {
	once sync.Once
	fsw  *fsnotify.Watcher

	mu   sync.Mutex
	next chan struct{} // closed at the next write; nil once notifications are unavailable
}

// Written returns a channel closed at the next write to the state file, by this process or any
// other. Take it before reading what may change, then wait on it: a write after the call is
// never missed. It returns nil when the platform or file system cannot report writes, or
// after the file was removed or replaced: the caller polls Generation instead. Notifications
// are best effort (a network file system may not report another host's writes), so a reader
// that waits on them should still look now and then.
func (db *DB) Written() <-chan struct{} {
	n := &db.written
	n.once.Do(func() { n.start(db.path) })
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.next == nil {
		return nil
	}
	return n.next
}

func (n *writeNotifier) start(path string) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return
	}
	if err := fsw.Add(path); err != nil {
		fsw.Close()
		return
	}
	n.fsw, n.next = fsw, make(chan struct{})
	go n.follow()
}

// follow broadcasts each write until the watcher closes. A lost event (a full kernel queue) is
// taken as a write; a removed or renamed file ends the notifications, since the path may now
// name another file that is not watched.
func (n *writeNotifier) follow() {
	defer n.stop()
	for {
		select {
		case ev, ok := <-n.fsw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				return
			}
			if ev.Has(fsnotify.Write) || ev.Has(fsnotify.Create) {
				n.broadcast(true)
			}
		case _, ok := <-n.fsw.Errors:
			if !ok {
				return
			}
			n.broadcast(true)
		}
	}
}

// broadcast wakes every waiter; more says whether notifications go on.
func (n *writeNotifier) broadcast(more bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.next == nil {
		return
	}
	close(n.next)
	n.next = nil
	if more {
		n.next = make(chan struct{})
	}
}

// stop ends the notifications: waiters wake and, calling Written again, fall back to polling.
func (n *writeNotifier) stop() {
	n.broadcast(false)
	if n.fsw != nil {
		n.fsw.Close()
	}
}

// close releases the watcher (DB.Close).
func (n *writeNotifier) close() {
	n.once.Do(func() {}) // a notifier never started stays so
	n.mu.Lock()
	fsw := n.fsw
	n.mu.Unlock()
	if fsw != nil {
		fsw.Close() // follow sees the closed channels and stops
	}
}
