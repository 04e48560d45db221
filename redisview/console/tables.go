package console

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoCommandTable: the server would not give its command table (COMMAND
// refused by an ACL, or unknown on a managed Redis). Without it the console
// cannot tell a read from a write, so it runs nothing.
var ErrNoCommandTable = errors.New("the console needs the server's command table (COMMAND), which it refused")

// tableMaxAge is how long a table is trusted when the server's run_id
// cannot be read (INFO refused) or has not changed: a server upgraded in
// place restarts (a new run_id), so an hour only bounds the odd case of a
// module loaded at run time.
const tableMaxAge = time.Hour

// Tables caches each server's command table, by a name the caller picks
// for the server (connection and node). A table is read again when the
// server's run_id changes (a restart, perhaps into another version) or
// after an hour. It is safe for concurrent use.
type Tables struct {
	Now func() time.Time // the clock; nil: time.Now

	mu       sync.Mutex
	tables   map[string]cached
	inflight map[string]*fetch // a read of COMMAND under way, by server
}

type cached struct {
	t    *Table
	read time.Time
}

// fetch is one read of a server's COMMAND that concurrent misses share:
// the reply is a few hundred KB, so a burst of console requests after a
// restart reads it once.
type fetch struct {
	done chan struct{}
	t    *Table
	err  error
}

// DefaultTables is the process's cache, shared by the console's page and
// its action kind (which the action registry builds without arguments).
var DefaultTables = &Tables{}

func (ts *Tables) now() time.Time {
	if ts.Now != nil {
		return ts.Now()
	}
	return time.Now()
}

// Get returns the command table of the server cl talks to (server names it
// in the cache): one INFO server round trip to compare run_ids, and the
// whole COMMAND reply when the table must be (re)read. cl must talk to one
// server: a cluster's client sends INFO and COMMAND to any node, whose
// run_ids differ (console.At resolves one node).
func (ts *Tables) Get(ctx context.Context, server string, cl redis.UniversalClient) (*Table, error) {
	if _, ok := cl.(*redis.ClusterClient); ok {
		return nil, fmt.Errorf("console: a command table is read from one server, not a cluster's client (%s)", server)
	}
	runID := serverRunID(ctx, cl)
	ts.mu.Lock()
	c, ok := ts.tables[server]
	if ok && (runID == "" || c.t.RunID == runID) && ts.now().Sub(c.read) < tableMaxAge {
		ts.mu.Unlock()
		return c.t, nil
	}
	f := ts.inflight[server]
	if f == nil {
		f = &fetch{done: make(chan struct{})}
		if ts.inflight == nil {
			ts.inflight = map[string]*fetch{}
		}
		ts.inflight[server] = f
		ts.mu.Unlock()
		// Read apart from this request's cancellation: others wait on it.
		f.t, f.err = readTable(context.WithoutCancel(ctx), cl, runID)
		ts.mu.Lock()
		delete(ts.inflight, server)
		if f.err == nil {
			if ts.tables == nil {
				ts.tables = map[string]cached{}
			}
			ts.tables[server] = cached{t: f.t, read: ts.now()}
		}
		close(f.done)
	}
	ts.mu.Unlock()
	select {
	case <-f.done:
		return f.t, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readTable reads and parses COMMAND.
func readTable(ctx context.Context, cl redis.UniversalClient, runID string) (*Table, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := cl.Do(ctx, "COMMAND").Result()
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return nil, fmt.Errorf("%w: %v", ErrNoCommandTable, err)
		}
		return nil, err
	}
	cmds, err := parseTable(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCommandTable, err)
	}
	return &Table{RunID: runID, Commands: cmds}, nil
}

// serverRunID is INFO server's run_id, "" when INFO is refused.
func serverRunID(ctx context.Context, cl redis.UniversalClient) string {
	txt, err := cl.Do(ctx, "INFO", "server").Text()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(line, "run_id:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
