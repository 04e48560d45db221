package redisview

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
)

// How often a connection re-reads notify-keyspace-events while keyspace
// notifications are off (or refused). Live interest (WantKeyspace: a live
// topic showing a key, a Rate limits or Locks sweep) makes it every
// KeyspaceOffRecheck, so that an operator turning them on at runtime
// (CONFIG SET notify-keyspace-events Kz) has those views use them within
// about a second; with no one watching it is every KeyspaceIdleRecheck. A
// refused CONFIG GET (ACL, managed Redis) is not asked again for
// KeyspaceIdleRecheck whoever watches.
const (
	KeyspaceOffRecheck  = time.Second
	KeyspaceIdleRecheck = 30 * time.Second
)

// KeyspaceState is what a connection's keyspace watchers know: the flags
// they last read, and whether Keydeck is subscribed to keyspace events —
// so that a page does not say notifications are used before they are.
type KeyspaceState struct {
	Checked time.Time // when notify-keyspace-events was last read; zero: never
	Flags   string    // as last read ("" off, or refused)
	Refused bool      // CONFIG GET was refused: the watcher subscribes anyway
	// Why: the refusal, in words, when Refused.
	Why string
	// Subscribed: a watcher holds a confirmed subscription to keyspace
	// events, since Since.
	Subscribed bool
	Since      time.Time
}

// keyspaceState is kept by the connection's watchers.
type keyspaceState struct {
	mu   sync.Mutex
	st   KeyspaceState
	subs int // confirmed subscriptions
	// want counts live interest (WantKeyspace); wake is closed (and
	// replaced) when it starts, so that an idle watcher re-reads at once.
	want int
	wake chan struct{}
}

// WantKeyspace records that something live uses c's keyspace events until
// release is called: while anything does, the connection's watchers re-read
// notify-keyspace-events every KeyspaceOffRecheck instead of every
// KeyspaceIdleRecheck, and the first interest wakes them at once.
func (c *Conn) WantKeyspace() (release func()) {
	c.ks.mu.Lock()
	c.ks.want++
	if c.ks.want == 1 && c.ks.wake != nil {
		close(c.ks.wake)
		c.ks.wake = nil
	}
	c.ks.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.ks.mu.Lock()
			c.ks.want--
			c.ks.mu.Unlock()
		})
	}
}

// waitRecheck waits before the next read of notify-keyspace-events: the
// live interval while something watches, else the idle one (cut short
// when interest starts); after a refusal the idle one whoever watches.
func (c *Conn) waitRecheck(ctx context.Context) {
	c.ks.mu.Lock()
	live, idle := KeyspaceOffRecheck, KeyspaceIdleRecheck
	d, wake := idle, (<-chan struct{})(nil)
	switch {
	case c.ks.st.Refused:
		if left := idle - c.clock.Since(c.ks.st.Checked); left > 0 {
			d = left
		} else {
			d = 0
		}
	case c.ks.want > 0:
		d = live
	default:
		if c.ks.wake == nil {
			c.ks.wake = make(chan struct{})
		}
		wake = c.ks.wake
	}
	c.ks.mu.Unlock()
	if d <= 0 { // due now (a fake clock's timer of 0 waits for its next Advance)
		return
	}
	t := c.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	case <-wake:
	}
}

// KeyspaceFlags reads notify-keyspace-events for the connection's
// watchers, which share the answer: one younger than half the live
// interval is reused, and a refusal is not asked again for the idle
// interval. refused is the refusal in words ("" when answered); err a
// failed round trip.
func (c *Conn) KeyspaceFlags(ctx context.Context) (flags, refused string, err error) {
	live, idle := KeyspaceOffRecheck, KeyspaceIdleRecheck
	c.ks.mu.Lock()
	st := c.ks.st
	c.ks.mu.Unlock()
	switch age := c.clock.Since(st.Checked); {
	case st.Checked.IsZero():
	case st.Refused && age < idle:
		return "", st.Why, nil
	case !st.Refused && age < live/2:
		return st.Flags, "", nil
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	m, err := c.Client().ConfigGet(cctx, "notify-keyspace-events").Result()
	if err != nil {
		if IsConnErr(err) {
			return "", "", err
		}
		why := Refusal("CONFIG GET", err)
		c.noteFlags("", why)
		return "", why, nil
	}
	f := m["notify-keyspace-events"]
	c.noteFlags(f, "")
	return f, "", nil
}

// Keyspace says what the connection's keyspace watchers know.
func (c *Conn) Keyspace() KeyspaceState {
	c.ks.mu.Lock()
	defer c.ks.mu.Unlock()
	return c.ks.st
}

func (c *Conn) noteFlags(flags, refused string) {
	c.ks.mu.Lock()
	defer c.ks.mu.Unlock()
	c.ks.st.Checked, c.ks.st.Flags, c.ks.st.Refused, c.ks.st.Why = c.clock.Now(), flags, refused != "", refused
}

// noteSubscribed counts a confirmed subscription in (+1) or out (-1).
func (c *Conn) noteSubscribed(d int) {
	c.ks.mu.Lock()
	defer c.ks.mu.Unlock()
	c.ks.subs += d
	switch {
	case c.ks.subs > 0 && !c.ks.st.Subscribed:
		c.ks.st.Subscribed, c.ks.st.Since = true, c.clock.Now()
	case c.ks.subs <= 0:
		c.ks.st.Subscribed, c.ks.st.Since = false, time.Time{}
	}
}

// WatchKeyspace delivers keyspace notifications — the database and key of
// every write — to fn until ctx ends, so live views refresh at once instead
// of at their next tick. It is OnKeyEvent for the length of ctx, and shares
// the connection's one subscription with every other consumer; when it
// returns, fn is not called again, and the subscription is closed if fn was
// its last consumer. fn runs on the subscription's goroutine and must not
// block.
func (c *Conn) WatchKeyspace(ctx context.Context, fn func(db int, key string)) {
	remove := c.OnKeyEvent(func(db int, key, _ string) { fn(db, key) }, nil)
	<-ctx.Done()
	remove()
}

// runKeyspace follows the server's keyspace events until ctx ends, handing
// each to the connection's consumers (OnKeyEvent). It subscribes only
// while the server has keyspace events enabled (notify-keyspace-events
// with K); where it cannot tell (no CONFIG for this user) it tries and
// backs off on refusal.
func (c *Conn) runKeyspace(ctx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		if !c.keyspaceEventsOn(ctx) {
			c.waitRecheck(ctx)
			continue
		}
		err := c.subscribeKeyspace(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			// Events were turned off: wait for them like before the
			// subscription (it once went on to log a nil error, a panic).
			backoff = time.Second
			continue
		}
		c.log.Debug("keyspace notifications interrupted", "err", c.SafeErr(err))
		clock.Sleep(ctx, c.clock, backoff)
		backoff = min(backoff*2, 30*time.Second)
	}
}

// keyspaceEventsOn reports whether the server publishes keyspace events; a
// server that will not say (CONFIG refused) is assumed to.
func (c *Conn) keyspaceEventsOn(ctx context.Context) bool {
	f, refused, err := c.KeyspaceFlags(ctx)
	switch {
	case err != nil:
		return false
	case refused != "":
		return true // refused: try the subscription anyway
	}
	return strings.Contains(f, "K")
}

// subscribePing is how long a quiet subscription waits before it checks
// the connection with a PING (go-redis's own health check, whose PINGs
// Keydeck could not count as its own traffic, is off).
const subscribePing = 3 * time.Second

// errSubscriptionClosed: go-redis closed the subscription's channel.
var errSubscriptionClosed = errors.New("the keyspace subscription was closed")

// errResubscribed: go-redis lost the subscription's connection and
// subscribed again on a new one; the events in between are lost, so the
// consumers are told (state false, then true) by subscribing afresh.
var errResubscribed = errors.New("the keyspace subscription's connection was lost (events were missed)")

// subscribeKeyspace delivers events until ctx ends, the subscription
// fails (an error), or a recheck finds keyspace events off (nil).
func (c *Conn) subscribeKeyspace(ctx context.Context) error {
	subs, err := c.openKeyspaceSubs(ctx)
	defer func() {
		for _, ps := range subs {
			_ = ps.Close()
		}
	}()
	if err != nil {
		return err
	}
	// A subscription's commands bypass the client's hooks: count them here.
	c.own.done.Add(int64(len(subs))) // PSUBSCRIBE, confirmed
	c.noteSubscribed(1)
	defer c.noteSubscribed(-1)
	c.kev.subscribed(true)
	defer c.kev.subscribed(false)
	// Re-check now and then that events are still on: an operator may
	// turn them off, and the subscription would then only cost a connection.
	recheck := c.clock.NewTicker(time.Minute)
	defer recheck.Stop()
	ping := c.clock.NewTicker(subscribePing)
	defer ping.Stop()
	heard := c.clock.Now()
	mctx, stop := context.WithCancel(ctx) // ends the merging goroutines with this subscription
	defer stop()
	ch := mergeKeyspaceChannels(mctx, subs)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-recheck.C():
			if !c.keyspaceEventsOn(ctx) {
				return nil
			}
		case <-ping.C():
			if c.clock.Since(heard) < subscribePing {
				continue
			}
			if err := c.pingKeyspaceSubs(ctx, subs); err != nil {
				return err
			}
			heard = c.clock.Now()
		case m, ok := <-ch:
			if !ok || m == nil {
				return errSubscriptionClosed
			}
			heard = c.clock.Now()
			switch m := m.(type) {
			case *redis.Message:
				if db, key, ok := parseKeyspaceChannel(m.Channel); ok {
					c.kev.dispatch(db, key, m.Payload)
				}
			case *redis.Subscription:
				// The first confirmation was read by openKeyspaceSubs:
				// this one follows a reconnection.
				return errResubscribed
			}
		}
	}
}

// parseKeyspaceChannel splits "__keyspace@3__:some:key".
func parseKeyspaceChannel(ch string) (int, string, bool) {
	rest, ok := strings.CutPrefix(ch, "__keyspace@")
	if !ok {
		return 0, "", false
	}
	dbs, key, ok := strings.Cut(rest, "__:")
	if !ok {
		return 0, "", false
	}
	db, err := strconv.Atoi(dbs)
	return db, key, err == nil
}
