package redisview

import (
	"context"
	"strconv"
	"sync"
)

// KeyWatch maps keys to the names (live topics) showing them, so that a
// keyspace notification refreshes exactly those and nothing else. Names
// are counted, not a set: a topic's new poller adds its name before its old
// one, stopping, removes it. The zero value is ready to use; Listen starts
// the notification listeners, and Wait awaits them once their context ends.
//
// A connection with a key watched is live interest in its keyspace events
// (Conn.WantKeyspace): its watcher re-reads notify-keyspace-events every
// second instead of every 30 s while they are off.
type KeyWatch struct {
	mu sync.Mutex
	m  map[string]map[string]int
	wg sync.WaitGroup
	// per: Adds not undone, by connection; conns: the connections Listen
	// follows; release ends a connection's interest.
	per     map[string]int
	conns   map[string]*Conn
	release map[string]func()
}

// count moves a connection's watched count by d and its keyspace interest
// with it. Called with w.mu held.
func (w *KeyWatch) count(conn string, d int) {
	if w.per == nil {
		w.per, w.release = map[string]int{}, map[string]func(){}
	}
	w.per[conn] += d
	switch n := w.per[conn]; {
	case n > 0 && w.release[conn] == nil && w.conns[conn] != nil:
		w.release[conn] = w.conns[conn].WantKeyspace()
	case n <= 0:
		delete(w.per, conn)
		if r := w.release[conn]; r != nil {
			r()
			delete(w.release, conn)
		}
	}
}

func keyWatchKey(conn string, db int, key string) string {
	return conn + "\x00" + strconv.Itoa(db) + "\x00" + key
}

// Add counts name as showing key.
func (w *KeyWatch) Add(conn string, db int, key, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]map[string]int{}
	}
	k := keyWatchKey(conn, db, key)
	if w.m[k] == nil {
		w.m[k] = map[string]int{}
	}
	w.m[k][name]++
	w.count(conn, 1)
}

// Remove undoes one Add.
func (w *KeyWatch) Remove(conn string, db int, key, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := keyWatchKey(conn, db, key)
	if w.m[k][name]--; w.m[k][name] <= 0 {
		delete(w.m[k], name)
	}
	if len(w.m[k]) == 0 {
		delete(w.m, k)
	}
	w.count(conn, -1)
}

// Names lists the names showing a key; cheap for the (usual) key nobody
// watches.
func (w *KeyWatch) Names(conn string, db int, key string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	set := w.m[keyWatchKey(conn, db, key)]
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	return out
}

// Listen follows c's keyspace notifications (WatchKeyspace) in the
// background until ctx ends, calling kick with each name showing a key
// that was written. kick must not block. Call Listen before Wait.
func (w *KeyWatch) Listen(ctx context.Context, c *Conn, kick func(name string)) {
	w.mu.Lock()
	if w.conns == nil {
		w.conns = map[string]*Conn{}
	}
	w.conns[c.Name] = c
	w.count(c.Name, 0) // keys added before Listen
	w.mu.Unlock()
	w.wg.Go(func() {
		c.WatchKeyspace(ctx, func(db int, key string) {
			for _, n := range w.Names(c.Name, db, key) {
				kick(n)
			}
		})
	})
}

// Wait returns when every listener has ended (their contexts are done).
func (w *KeyWatch) Wait() { w.wg.Wait() }

// Watching reports whether a key of conn is watched now (an Add not
// undone).
func (w *KeyWatch) Watching(conn string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.per[conn] > 0
}
