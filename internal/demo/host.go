package demo

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// host is one demo server: a miniredis, plus what a real Redis server tells
// its operators and miniredis does not — INFO's sections, COMMAND, CLIENT,
// CONFIG, SLOWLOG, LATENCY, MEMORY STATS, XINFO (see doc.go) — so that
// every panel Keydeck shows for a real server has its figure on the demo
// too. Every figure is the demo's own: counted from the
// commands it serves and measured from the data it holds. What the demo
// cannot know is left out of INFO, so the page says so in words.
//
// miniredis registers INFO and MEMORY itself and refuses a second
// registration, so host answers through the server's pre-hook, which sees
// every command before miniredis runs it. The hook runs each client
// command itself (see serve), one at a time under gate, as Redis's single
// thread does: that is what makes the counts exact. A lookup is counted
// against the database the client really has selected, and keys that
// expire on a clock tick are told apart from keys a client deletes at the
// same moment.
type host struct {
	m       *miniredis.Miniredis
	srv     *server.Server
	started time.Time
	runID   string

	// gate serialises client commands with each other and with the clock
	// tick and the memory walk. Blocking commands (BLPOP …) run outside
	// it, or a waiting client would stop the server.
	gate sync.Mutex

	ln        net.Listener // see host_conns.go
	accepting sync.WaitGroup
	closeOnce sync.Once
	secret    string      // the greeting's name
	table     *commandSet // Redis's command table, restricted to the demo's

	mu     sync.Mutex // guards peers, conns, nextID
	peers  map[*server.Peer]*peerState
	conns  map[int64]*clientConn
	nextID int64

	// Guarded by gate.
	internal   int64 // commands the host dispatched for itself (probes, walks): not traffic
	answered   int64 // commands the host answered itself, which miniredis never counted
	cmdsBase   int64 // CONFIG RESETSTAT: the command count when stats were reset
	connsBase  int64
	hits       int64
	misses     int64
	expired    int64
	usedMem    int64 // bytes of data, from the last memory walk
	peakMem    int64
	ops        opsMeter
	slow       slowlog
	latency    latencyMonitor
	stats      cmdStats
	streamCuts map[string]bool // see host_streams.go
	groupReads map[string]bool // key NUL group: groups that delivered entries
	maxMemory  int64           // CONFIG SET maxmemory: writes are refused above it (noeviction)
	replID     string          // INFO replication's master_replid
	netIn      atomic.Int64
	netOut     atomic.Int64
	probe      *recorder         // shares a client's connection state for one probe
	dbPeers    map[int]*recorder // one internal connection per database, for the walks
}

// peerState is what the host tracks of one client connection.
type peerState struct {
	// inTx is set between MULTI and EXEC/DISCARD. A command sent then is
	// queued, not run: the host neither answers it (miniredis queues it) nor
	// counts its lookups.
	inTx bool
	// running is set while serve runs this peer's command through
	// miniredis, so the hook lets it pass.
	running bool
	// db is the database the client selected (outside transactions),
	// for the commands the host answers from miniredis's data.
	db int

	// What CLIENT LIST shows (see host_client.go).
	conn     *clientConn
	lastAt   time.Time // the last command's start
	lastCmd  string    // its full name ("client|list"), "" if unknown
	lastSize int       // its size as sent, in bytes
	argvMem  int       // the running command's arguments, in bytes
	queued   int       // commands queued in MULTI
	multiMem int       // their arguments, in bytes
	subs     map[string]bool
	psubs    map[string]bool
	killed   bool // by CLIENT KILL; guarded by host.mu
	blocked  bool // waiting in a blocking command
}

func (st *peerState) subscriptions() int { return len(st.subs) + len(st.psubs) }

// internalName marks the host's own connections. CLIENT SETNAME refuses
// names with spaces, so no client can take it.
const internalName = "keydeck demo internal"

// databases is how many databases INFO keyspace and the walks cover: Redis's
// default, and more than the demo uses (eIsland has 0–14).
const databases = 16

func newHost(m *miniredis.Miniredis, now time.Time) *host {
	id := make([]byte, 20)
	_, _ = rand.Read(id)
	repl := make([]byte, 20)
	_, _ = rand.Read(repl)
	h := &host{
		m: m, srv: m.Server(), started: now, runID: hex.EncodeToString(id), replID: hex.EncodeToString(repl),
		peers: map[*server.Peer]*peerState{}, dbPeers: map[int]*recorder{},
		conns: map[int64]*clientConn{}, secret: newSecret(),
		probe: newRecorder(),
		slow:  slowlog{threshold: 10000, max: 128},
	}
	h.table = buildCommands(func(name string) bool {
		return name != "" && h.srv.IsRegisteredCommand(name)
	})
	h.ops.lastAt = now
	h.srv.SetPreHook(h.hook)
	return h
}

// hook runs before miniredis sees a command; true means it is answered.
func (h *host) hook(c *server.Peer, cmd string, args ...string) bool {
	if c.ClientName == internalName {
		return false
	}
	if h.greeted(c, cmd, args) {
		return true
	}
	st := h.peer(c)
	if st == nil {
		// A command a Lua script runs: its EVAL holds the gate and
		// miniredis's lock on this very goroutine. Count its lookups (the
		// probe shares the script's connection state, so it runs under
		// the same lock) and let miniredis run it.
		h.countLookups(c, cmd, args)
		h.noteStreamCut(cmd, args)
		return false
	}
	if st.running {
		return false
	}
	if blocking[cmd] {
		return h.block(c, st, cmd, args)
	}
	h.gate.Lock()
	defer h.gate.Unlock()
	h.serve(c, st, cmd, args)
	return true
}

// peer returns the state of a client connection, or nil for the peers
// miniredis makes for the commands of a Lua script (a client connection's
// state is made when its greeting arrives: see host_conns.go).
func (h *host) peer(c *server.Peer) *peerState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peers[c]
}

// blocking commands wait inside miniredis for another client's write, so
// they cannot hold the gate. Neither Keydeck nor the simulator sends them.
var blocking = map[string]bool{
	"BLPOP": true, "BRPOP": true, "BRPOPLPUSH": true, "BLMOVE": true, "BLMPOP": true,
	"BZPOPMIN": true, "BZPOPMAX": true, "BZMPOP": true, "XREAD": true, "XREADGROUP": true,
	"WAIT": true, "WAITAOF": true,
}

// countLookups adds the keys cmd looks up to keyspace_hits or
// keyspace_misses, as Redis counts its key lookups for reading. It asks
// miniredis with EXISTS on the client's own connection state, so the
// database is the one the client has selected. Commands queued in MULTI are
// not counted: their lookups happen at EXEC, out of the hook's sight.
func (h *host) countLookups(c *server.Peer, cmd string, args []string) {
	keys := lookedUp(cmd, args)
	if len(keys) == 0 {
		return
	}
	h.probe.peer.Ctx = c.Ctx
	n, ok := h.call(h.probe, append([]string{"EXISTS"}, keys...)...)
	h.probe.peer.Ctx = nil
	if !ok || n < 0 || n > int64(len(keys)) {
		return
	}
	h.hits += n
	h.misses += int64(len(keys)) - n
}

// commands is total_commands_processed: what miniredis counted, without the
// host's own probes, with the commands the host answered itself.
func (h *host) commands() int64 {
	return int64(h.srv.TotalCommands()) - h.internal + h.answered - h.cmdsBase
}

// tick advances the demo's clock by elapsed, expiring the keys whose TTL
// ran out, and counts them. The gate keeps every client command out while
// the keyspace is counted before and after, so the difference is exactly
// the expired keys.
func (h *host) tick(now time.Time, elapsed time.Duration) {
	h.gate.Lock()
	defer h.gate.Unlock()
	before := h.keyCount()
	h.m.FastForward(elapsed)
	h.m.SetTime(now)
	if gone := before - h.keyCount(); gone > 0 {
		h.expired += gone
	}
	h.ops.sample(now, h.commands())
}

// setTime sets the server's clock without a tick (at start).
func (h *host) setTime(now time.Time) { h.m.SetTime(now) }

func (h *host) keyCount() int64 {
	var n int64
	for db := range databases {
		if v, ok := h.call(h.dbPeer(db), "DBSIZE"); ok {
			n += v
		}
	}
	return n
}

// memoryEvery is how often the demo re-measures its memory.
const memoryEvery = 5 * time.Second

// measureMemory sums what the demo's data takes: every value as MEMORY
// USAGE measures it (the Go memory miniredis holds it in), plus every key's
// name. The server's own overhead (connections, scripts, bookkeeping) is not
// counted. It takes the gate one database at a time, so clients wait at
// most for one database's walk.
func (h *host) measureMemory() {
	var total int64
	for db := range databases {
		h.gate.Lock()
		keys := h.m.DB(db).Keys()
		r := h.dbPeer(db)
		for _, k := range keys {
			if n, ok := h.call(r, "MEMORY", "USAGE", k); ok && n > 0 {
				total += n + int64(len(k))
			}
		}
		h.gate.Unlock()
	}
	h.gate.Lock()
	h.usedMem = total
	h.peakMem = max(h.peakMem, total)
	h.gate.Unlock()
}

// recorder is an internal connection: a peer whose replies land in a buffer.
type recorder struct {
	buf  bytes.Buffer
	peer *server.Peer
}

func newRecorder() *recorder {
	r := &recorder{}
	r.peer = server.NewPeer(bufio.NewWriter(&r.buf))
	r.peer.ClientName = internalName
	return r
}

// dbPeer returns the internal connection that has db selected.
func (h *host) dbPeer(db int) *recorder {
	r, ok := h.dbPeers[db]
	if !ok {
		r = newRecorder()
		h.call(r, "SELECT", strconv.Itoa(db))
		h.dbPeers[db] = r
	}
	return r
}

// call runs one command on an internal connection and returns its integer
// reply; ok is false for any other reply.
func (h *host) call(r *recorder, args ...string) (int64, bool) {
	h.internal++
	r.buf.Reset()
	h.srv.Dispatch(r.peer, args)
	r.peer.Flush()
	line, _, _ := bytes.Cut(r.buf.Bytes(), []byte("\r\n"))
	r.buf.Reset()
	if len(line) < 2 || line[0] != ':' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(line[1:]), 10, 64)
	return n, err == nil
}

// opsMeter is instantaneous_ops_per_sec the way Redis computes it: the
// command rate over each clock tick, averaged over the last 16 ticks.
type opsMeter struct {
	last    int64
	lastAt  time.Time
	samples [16]float64
	n, next int
}

func (o *opsMeter) sample(now time.Time, total int64) {
	dt := now.Sub(o.lastAt)
	if dt <= 0 {
		return
	}
	o.samples[o.next] = float64(total-o.last) / dt.Seconds()
	o.next = (o.next + 1) % len(o.samples)
	o.n = min(o.n+1, len(o.samples))
	o.last, o.lastAt = total, now
}

func (o *opsMeter) rate() int64 {
	if o.n == 0 {
		return 0
	}
	var sum float64
	for _, s := range o.samples[:o.n] {
		sum += s
	}
	return int64(sum / float64(o.n))
}
