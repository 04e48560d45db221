package handlers

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/server"
)

// The server pages' reads (CLIENT LIST, CONFIG GET *, INFO, MEMORY,
// PUBSUB CHANNELS, SLOWLOG, LATENCY) cost the server O(clients, settings,
// channels) each. Reloading, many tabs or many viewers must not multiply
// them: one read per connection, node and page kind runs at a time, and
// its result serves everyone for sharedReadFor.
const sharedReadFor = 2 * time.Second

// sharedReads holds one slot per (kind, connection, node); nodes come
// from the connection's own node list, so the slots are bounded.
type sharedReads struct {
	mu    sync.Mutex
	slots map[string]*sharedSlot
}

type sharedSlot struct {
	mu      sync.Mutex // held while the one read runs
	variant string     // the read's own parameters (PUBSUB CHANNELS' pattern)
	at      time.Time
	ok      bool
	v       any
}

// maxSharedSlots bounds the slots kept: per-key reads (a stream's groups)
// add one per key looked at; past the bound, old ones are dropped.
const maxSharedSlots = 1024

func (r *sharedReads) slot(key string, now time.Time) *sharedSlot {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots == nil {
		r.slots = map[string]*sharedSlot{}
	}
	if len(r.slots) >= maxSharedSlots && r.slots[key] == nil {
		for k, s := range r.slots {
			// A slot being read is locked: left alone, whoever waits on it
			// still gets its result.
			if s.mu.TryLock() {
				if now.Sub(s.at) > time.Minute {
					delete(r.slots, k)
				}
				s.mu.Unlock()
			}
		}
	}
	s := r.slots[key]
	if s == nil {
		s = &sharedSlot{}
		r.slots[key] = s
	}
	return s
}

// forget drops a connection's reads: an action just changed its server
// (a setting, a client killed), and the page it returns to shows that.
func (r *sharedReads) forget(conn string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, s := range r.slots {
		if strings.HasPrefix(k, conn+"\x00") {
			s.mu.Lock()
			s.ok = false
			s.mu.Unlock()
		}
	}
}

// shared runs read for (kind, conn, node, variant) unless a result under
// sharedReadFor old is there, waiting for a read already running. The
// read is not cut short by the request that happened to start it: the
// others wait for it.
func shared[T any](ctx context.Context, a *App, kind, conn, node, variant string, read func(context.Context) T) T {
	return sharedEvery(ctx, a, conn+"\x00"+node+"\x00"+kind, variant, sharedReadFor, read)
}

// sharedEvery is shared under slot (which begins with the connection's
// name and a NUL), reused for every.
func sharedEvery[T any](ctx context.Context, a *App, slot, variant string, every time.Duration, read func(context.Context) T) T {
	s := a.reads.slot(slot, a.now())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ok && s.variant == variant && a.now().Sub(s.at) < every {
		return s.v.(T)
	}
	v := read(context.WithoutCancel(ctx))
	s.v, s.variant, s.at, s.ok = v, variant, a.now(), true
	return v
}

// readSlowlog reads a slowlog, reusing a read under every old (the live
// view asks for a longer every than a page load: slowlogEvery).
func (a *App) readSlowlog(ctx context.Context, conn *redisview.Conn, srv redisview.Server, every time.Duration) server.Slowlog {
	return sharedEvery(ctx, a, conn.Name+"\x00"+srv.Node.Addr+"\x00slowlog", "", every, func(ctx context.Context) server.Slowlog {
		return server.ReadSlowlog(ctx, srv, conn, a.ownKey())
	})
}

func (a *App) readLatency(ctx context.Context, conn string, srv redisview.Server) server.Latency {
	return shared(ctx, a, "latency", conn, srv.Node.Addr, "", func(ctx context.Context) server.Latency {
		return server.ReadLatency(ctx, srv)
	})
}

// clientList is CLIENT LIST read once for everyone looking.
type clientList struct {
	list []server.Client
	err  error
}

func (a *App) readClients(ctx context.Context, conn string, srv redisview.Server) ([]server.Client, error) {
	r := shared(ctx, a, "clients", conn, srv.Node.Addr, "", func(ctx context.Context) clientList {
		l, err := server.Clients(ctx, srv)
		return clientList{l, err}
	})
	return r.list, r.err
}
