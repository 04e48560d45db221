package redisview

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Keydeck's own traffic.
//
// A server's INFO stats total_commands_processed counts every command it
// runs, Keydeck's sweeps and polls as much as the application's traffic; on
// a quiet server Keydeck is most of it. Every client of a connection
// therefore carries a hook that counts the commands Keydeck has the server
// run, the way the server counts them: each command of a pipeline or a
// transaction by itself (MULTI and EXEC included; a queued command only when
// EXEC ran it), the connection set-up (HELLO, SELECT, CLIENT SETNAME), the
// INFO that reads the figure; not the commands the server rejects before
// running them (unknown command, wrong arity, ACL, OOM …), which Redis
// counts as rejected_calls instead. Calls made inside a script are the
// script's caller's to report (ScriptCalls); until it does, the count is
// known to be short and readings say so.
//
// To compare its count with the server's at the moment the server reads
// its own, the round trip that carries the INFO (WithOwnMark) closes a
// gate: it waits (briefly, markWait) for Keydeck's round trips in flight
// to this server to end and holds new ones until its reply is in. Both
// counters then describe the same moment exactly; when the wait runs out
// the mark says by how much they may differ.

// OwnCount is one reading of the commands Keydeck had one server run.
// Done only grows; compare two readings to get a rate.
type OwnCount struct {
	// Done is how many commands the server ran for Keydeck, counted when
	// their reply arrived.
	Done int64
	// InFlight is how many commands were sent whose reply had not arrived:
	// the server may or may not have run them yet.
	InFlight int64
	// Unsure counts (since start) commands that never got a reply (a
	// timeout, a broken connection): they may or may not have run.
	Unsure int64
	// Scripts counts (since start) scripts that ran whose inner commands
	// nobody reported: the server counted more than Done says.
	Scripts int64
}

// ownTraffic holds the counters of one server; connections to the same
// server share one.
type ownTraffic struct {
	done, inFlight, unsure, scripts atomic.Int64
	gate                            gate
	lat                             ownLatency // round-trip times (ownlatency.go)
}

// markWait is how long a marked round trip waits for the round trips in
// flight before it: a sweep's pipeline takes a few milliseconds.
const markWait = 50 * time.Millisecond

func (t *ownTraffic) read() OwnCount {
	// InFlight first: a command that completes between the two loads is
	// then seen at most twice (in flight and done), never missed.
	f := t.inFlight.Load()
	return OwnCount{Done: t.done.Load(), InFlight: f, Unsure: t.unsure.Load(), Scripts: t.scripts.Load()}
}

// OwnCount reads the counters of the commands Keydeck had this
// connection's server run (shared by every connection to that server).
func (c *Conn) OwnCount() OwnCount { return c.own.read() }

// ScriptCalls reports the n commands a script Keydeck ran on this server
// called (redis.call), which the server counts and the hook cannot see.
// Call it once per script run that returned without error.
func (c *Conn) ScriptCalls(n int64) {
	c.own.done.Add(n)
	c.own.scripts.Add(-1)
}

// OwnMark brackets one round trip (a command or a pipeline) with readings
// of the own-traffic counters, so that a figure the server reported in
// that round trip can be compared with Keydeck's count at the same moment:
// the server read its figure when Keydeck's count was between Before.Done
// and After.Done+After.InFlight.
type OwnMark struct {
	Before OwnCount // just before the round trip was sent
	After  OwnCount // just after its reply, without the round trip's own commands

	// Quiet: no other round trip of Keydeck's to this server overlapped
	// this one, so After.Done is Keydeck's exact count when the server
	// read its figure (it differs from Before.Done only by the set-up of a
	// new connection, which precedes the round trip's own commands).
	Quiet bool

	claimed, filled bool
}

type ownMarkKey struct{}

// WithOwnMark returns a context whose first round trip on a connection's
// client fills m (the set-up of a new connection inside it does not).
func WithOwnMark(ctx context.Context, m *OwnMark) context.Context {
	return context.WithValue(ctx, ownMarkKey{}, m)
}

// Marked reports whether a round trip filled the mark.
func (m *OwnMark) Marked() bool { return m.filled }

// ownHook counts what its client has the server run.
type ownHook struct{ t *ownTraffic }

func (h ownHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h ownHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ctx, rt := h.begin(ctx, 1)
		err := next(ctx, cmd)
		h.end(rt, []redis.Cmder{cmd}, func(int) error { return err })
		return err
	}
}

func (h ownHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx, rt := h.begin(ctx, len(cmds))
		err := next(ctx, cmds)
		h.end(rt, cmds, func(i int) error { return cmds[i].Err() })
		return err
	}
}

// nestedKey marks the context of a round trip's own inner round trips
// (go-redis sets a new connection up with the command's context): they
// neither wait at the gate their round trip passed nor take its mark.
type nestedKey struct{}

// roundTrip is what begin hands to end.
type roundTrip struct {
	mark  *OwnMark // the round trip carries a mark and holds the gate shut
	gated bool     // the round trip passed the gate and must leave it
	start time.Time
}

func (h ownHook) begin(ctx context.Context, n int) (context.Context, roundTrip) {
	var rt roundTrip
	if ctx.Value(nestedKey{}) == nil {
		if m, _ := ctx.Value(ownMarkKey{}).(*OwnMark); m != nil && !m.claimed {
			m.claimed = true
			m.Quiet = h.t.gate.shut(markWait)
			m.Before = h.t.read()
			rt.mark = m
		} else {
			h.t.gate.enter()
			rt.gated = true
		}
		ctx = context.WithValue(ctx, nestedKey{}, true)
	}
	h.t.inFlight.Add(int64(n))
	rt.start = h.t.lat.now()
	return ctx, rt
}

// end counts cmds once their replies are in; errOf(i) is how cmds[i] ended.
func (h ownHook) end(rt roundTrip, cmds []redis.Cmder, errOf func(int) error) {
	now := h.t.lat.now()
	h.t.lat.record(now.Sub(rt.start), now)
	if m := rt.mark; m != nil {
		m.After = h.t.read()
		m.After.InFlight -= int64(len(cmds))
		m.Quiet = m.Quiet && m.Before.InFlight == 0 && m.After.InFlight == 0
		m.filled = true
		defer h.t.gate.open()
	}
	if rt.gated {
		defer h.t.gate.leave()
	}
	var ran, unsure, scripts int64
	tx := len(cmds) >= 2 && cmds[0].Name() == "multi" && cmds[len(cmds)-1].Name() == "exec"
	for i, cmd := range cmds {
		err := errOf(i)
		var r, u bool
		if tx && (i == 0 || i == len(cmds)-1) && isServerReply(err) {
			// MULTI and EXEC ran whatever became of the transaction:
			// go-redis stamps an aborted one's error (WATCH, EXECABORT)
			// on them too.
			r = true
		} else {
			r, u = outcome(err)
		}
		switch {
		case r:
			ran++
			if isScript(cmd.Name()) && !strings.HasPrefix(errText(err), "NOSCRIPT") {
				scripts++
			}
		case u:
			unsure++
		}
	}
	h.t.done.Add(ran)
	h.t.unsure.Add(unsure)
	h.t.scripts.Add(scripts)
	h.t.inFlight.Add(-int64(len(cmds)))
}

// gate lets one marked round trip at a time run with no other round trip
// of Keydeck's to the same server in flight.
type gate struct {
	excl   sync.Mutex // held from shut to open
	mu     sync.Mutex
	active int           // round trips between enter and leave
	shutCh chan struct{} // non-nil while shut; closed when it opens
	idle   chan struct{} // closed when active drops to zero while shut
}

// enter waits while the gate is shut, then counts a round trip in.
func (g *gate) enter() {
	for {
		g.mu.Lock()
		if g.shutCh == nil {
			g.active++
			g.mu.Unlock()
			return
		}
		ch := g.shutCh
		g.mu.Unlock()
		<-ch
	}
}

func (g *gate) leave() {
	g.mu.Lock()
	g.active--
	if g.active == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
	g.mu.Unlock()
}

// shut keeps new round trips out and waits up to wait for those in flight
// to end; it reports whether they did. Call open after.
func (g *gate) shut(wait time.Duration) bool {
	g.excl.Lock()
	g.mu.Lock()
	g.shutCh = make(chan struct{})
	if g.active == 0 {
		g.mu.Unlock()
		return true
	}
	idle := make(chan struct{})
	g.idle = idle
	g.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		g.mu.Lock()
		if g.idle == idle {
			g.idle = nil
		}
		g.mu.Unlock()
		return false
	}
}

func (g *gate) open() {
	g.mu.Lock()
	close(g.shutCh)
	g.shutCh = nil
	g.mu.Unlock()
	g.excl.Unlock()
}

func isScript(name string) bool {
	switch name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// isServerReply reports an error that is the server's reply (or go-redis's
// reading of one, like redis.Nil or an aborted transaction).
func isServerReply(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}

// outcome says whether the server ran (and counted) a command that ended
// with err, and whether that is unknown.
func outcome(err error) (ran, unsure bool) {
	switch {
	case err == nil:
		return true, false
	case errors.Is(err, redis.TxFailedErr):
		return false, false // queued in a transaction that WATCH aborted
	case isServerReply(err):
		return !rejected(err.Error()), false
	case errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), isDialErr(err):
		return false, false // never sent
	}
	return false, true // sent, or not: no reply came
}

func isDialErr(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// rejectedPrefixes are the replies of commands the server refuses before
// running them (processCommand's rejections, and EXECABORT stamped on the
// commands of a discarded transaction); Redis counts them in
// rejected_calls, not total_commands_processed.
var rejectedPrefixes = []string{
	"ERR unknown command", "ERR unknown subcommand", "ERR wrong number of arguments",
	"ERR Can't execute", "ERR Command not allowed inside a transaction",
	"NOPERM", "NOAUTH", "OOM ", "MISCONF", "READONLY", "LOADING", "BUSY ",
	"MASTERDOWN", "NOREPLICAS", "MOVED ", "ASK ", "TRYAGAIN", "CROSSSLOT", "CLUSTERDOWN",
	"EXECABORT",
}

func rejected(msg string) bool {
	for _, p := range rejectedPrefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
