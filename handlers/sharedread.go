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

func (r *sharedReads) slot(key string) *sharedSlot {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots == nil {
		r.slots = map[string]*sharedSlot{}
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
	s := a.reads.slot(conn + "\x00" + node + "\x00" + kind)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ok && s.variant == variant && a.now().Sub(s.at) < sharedReadFor {
		return s.v.(T)
	}
	v := read(context.WithoutCancel(ctx))
	s.v, s.variant, s.at, s.ok = v, variant, a.now(), true
	return v
}

func (a *App) readSlowlog(ctx context.Context, conn *redisview.Conn, srv redisview.Server) server.Slowlog {
	return shared(ctx, a, "slowlog", conn.Name, srv.Node.Addr, "", func(ctx context.Context) server.Slowlog {
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
