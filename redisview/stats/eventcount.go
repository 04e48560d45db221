package stats

import (
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Keeping a database's per-family key counts current between two sweep
// passes from the server's keyspace events (issue 24).
//
// Every key comes into being through one place in Redis (dbAdd), which
// publishes "new" (notify-keyspace-events flag n) — for SET, HSET, LPUSH…
// on a missing key, and also for the destination of RENAME, COPY, MOVE and
// RESTORE. Every key leaves through "del" (DEL, UNLINK, GETDEL, EXPIRE with
// a time in the past, and the last member removed from a set, list, hash
// or sorted set), "expired" (lazily on access or by the active cycle),
// "evicted" (maxmemory), "rename_from" or "move_from". Verified on
// redis-server 7.0 by TestLiveCountsFollowRedis, which compares the counts
// kept from the events with SCAN for each of those commands:
//
//	new                                          +1
//	del, expired, evicted, rename_from, move_from −1
//	rename_to, copy_to, restore, move_to, set, … 0
//
// rename_to, copy_to and restore follow their own "new" for the same key
// even when it overwrote an existing one (RENAME onto an existing name,
// COPY … REPLACE, RESTORE … REPLACE: Redis deletes the old key without an
// event, then adds the new one): the +1 of that "new" is then one too
// many, and nothing in the events tells the two apart. Such keys are
// counted in Unsure — the true count lies between the count less Unsure
// and the count.
//
// Nothing is published for FLUSHDB, FLUSHALL, SWAPDB, a full resync of a
// replica or DEBUG RELOAD: that is drift, which the next pass corrects. A
// comparison with INFO keyspace finds it (Drifted) when the totals moved;
// INFO commandstats finds FLUSHDB, FLUSHALL and SWAPDB also when they did
// not (silentWrites: SWAPDB of two databases of as many keys).

// countFlags are the notify-keyspace-events flags that counting needs,
// with what each publishes.
var countFlags = []struct {
	flag byte
	what string
}{
	{'K', "keyspace channels"},
	{'g', "DEL, RENAME, MOVE"},
	{'x', "expiries"},
	{'e', "evictions"},
	{'n', "new keys"},
}

// CountableFlags says whether a server whose notify-keyspace-events reads
// flags publishes every event that keeps key counts: K (keyspace
// channels), g (del, rename_from, move_from), x (expired), e (evicted) —
// A includes g, x and e — and n (new keys), which A does not include. why
// names what is missing and the CONFIG SET line that turns it on (the
// flags as they are plus the missing ones, in a form Redis accepts).
//
// Redis (7.0 at least) does not show n beside A: CONFIG SET
// notify-keyspace-events KEAn reads back "AKE". Flags with A and K but no
// n are not ok here; NewHidden says so, and the counts then wait for a
// "new" event to tell (liveCounts).
func CountableFlags(flags string) (ok bool, why string) {
	all := strings.ContainsRune(flags, 'A')
	var missing, words []string
	for _, f := range countFlags {
		if strings.IndexByte(flags, f.flag) >= 0 || all && strings.IndexByte("gxe", f.flag) >= 0 {
			continue
		}
		missing = append(missing, string(f.flag))
		words = append(words, string(f.flag)+" ("+f.what+")")
	}
	if len(missing) == 0 {
		return true, ""
	}
	line := "CONFIG SET notify-keyspace-events " + flags + strings.Join(missing, "")
	if NewHidden(flags) {
		return false, fmt.Sprintf("notify-keyspace-events reads %q, and Redis does not show n (new keys) beside A: "+
			"counts are kept from events once a new key is heard (%s turns n on if it is off)", flags, line)
	}
	if flags == "" {
		return false, "keyspace notifications are off: " + line + " keeps the counts current between passes"
	}
	return false, fmt.Sprintf("notify-keyspace-events is %q, without %s: %s keeps the counts current between passes",
		flags, strings.Join(words, ", "), line)
}

// NewHidden reports flags that would count but for n, which Redis does not
// show beside A: whether new keys are published is unknown until one is
// heard.
func NewHidden(flags string) bool {
	return strings.ContainsRune(flags, 'A') && strings.ContainsRune(flags, 'K') && !strings.ContainsRune(flags, 'n')
}

// Flood limits: a liveCounts that hears more than MaxKeyEventRate events a
// second (of every database of the connection) for FloodSeconds seconds in
// a row stops following them until its next Reset — a server that busy
// would have its subscriber's output buffer (client-output-buffer-limit
// pubsub) and Keydeck's CPU spent on counting, and events lost when Redis
// drops the subscriber; the counts are then those of the last pass.
const (
	MaxKeyEventRate = 50000
	FloodSeconds    = 3
)

// liveCounts applies one database's keyspace events to per-family deltas
// since its last Reset. Feed it with Event and Subscribed (a
// redisview.Conn's OnKeyEvent) and Flags (notify-keyspace-events as last
// read); read it with Deltas, Unsure and Live. Safe for concurrent use;
// Event costs one classification (a DFA run over the key) and a map
// update.
//
// When to Reset: when a pass's counts are published, i.e. at the pass's
// END, so that the displayed count is the last pass's plus the deltas
// since it finished. SCAN returns every key that exists from the start to
// the end of a pass; a key created or deleted during the pass may or may
// not be returned, depending on whether the cursor had passed its slot in
// the hash table. Adding the events since the pass STARTED instead would
// count twice a key created during the pass and returned by it, and
// remove twice one deleted during the pass and not returned; adding them
// since it ENDED misses one created and not returned, and keeps one
// deleted after it was returned. Both err by at most the keys created or
// deleted during the pass (the exact figure would need to know where the
// cursor stood at each event), each side about equally; since the end
// needs only one set of deltas, and events followed from the end of a
// pass (not through all of it) — a subscription that starts or breaks
// during a pass spoils only that pass's live counts. The next pass
// corrects either way.
type liveCounts struct {
	db         int
	classifier func() *schema.Classifier
	clock      clock.Clock
	maxRate    int // events a second followed (MaxKeyEventRate)

	mu    sync.Mutex
	reset time.Time // zero: never reset (no pass yet)
	cl    *schema.Classifier
	fam   map[*schema.Family]int64
	unm   int64 // keys of no family
	total int64
	// unsure: rename_to, copy_to and restore right after their own "new":
	// each may have overwritten an existing key.
	unsure int64
	// recent holds the last recentNews "new" keys, hashed: a cluster's
	// nodes interleave their events, so a rename_to may come many events
	// after its own "new" (four slots missed one in twenty under -race).
	recent  [recentNews]uint64
	nrecent int
	seed    maphash.Seed
	// The subscription: on since subSince.
	sub      bool
	subSince time.Time
	// flags: as last read (Flags); flagsOK: they count; flagsSpoiled: since
	// the Reset they were read not counting (events may have been missed;
	// flags with n hidden behind A do not spoil: Live waits for a "new").
	flags, flagsWhy string
	flagsRead       bool
	flagsOK         bool
	flagsSpoiled    bool
	refused         bool // CONFIG GET was refused
	heardNew        bool // a "new" was heard on this subscription
	// Flood: events in the second from win, and the seconds in a row over
	// maxRate; floodWhy once it gave up (until Reset).
	win      time.Time
	winN     int
	tick     uint64 // events seen, for clockEvery
	hot      int
	floodWhy string
}

// recentNews is how many "new" keys a liveCounts remembers to match a
// rename_to, copy_to or restore with (by a 64-bit hash: names may be long).
const recentNews = 512

// keyHash is key's hash, never 0 (0 marks an empty slot).
func (l *liveCounts) keyHash(key string) uint64 { return maphash.String(l.seed, key) | 1 }

func newLiveCounts(db int, classifier func() *schema.Classifier, clk clock.Clock) *liveCounts {
	return &liveCounts{db: db, classifier: classifier, clock: clock.Or(clk), maxRate: MaxKeyEventRate, seed: maphash.MakeSeed()}
}

// Reset starts the deltas from zero (a pass's counts were just published),
// with the classifier as it is now (a pack reloaded since is used from
// here on), and tries again to follow a flood it gave up on.
func (l *liveCounts) Reset() {
	cl := l.classifier()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reset = l.clock.Now()
	l.cl = cl
	l.fam = map[*schema.Family]int64{}
	l.unm, l.total, l.unsure = 0, 0, 0
	l.recent, l.nrecent = [recentNews]uint64{}, 0
	l.flagsSpoiled = l.flagsRead && !l.flagsOK && (l.refused || !NewHidden(l.flags))
	l.floodWhy, l.hot, l.winN, l.win, l.tick = "", 0, 0, time.Time{}, 0
}

// Subscribed is told when the subscription starts (true) or ends (false):
// events in between are lost.
func (l *liveCounts) Subscribed(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sub = on
	l.heardNew = false
	if on {
		l.subSince = l.clock.Now()
	}
}

// Flags notes notify-keyspace-events as last read (redisview.Conn's
// KeyspaceFlags or Keyspace): flags, or refused, the refusal in words when
// the server would not say (CONFIG GET not permitted) — then which events
// are published is unknown, and the counts are not kept from them.
func (l *liveCounts) Flags(flags, refused string) {
	ok, why := CountableFlags(flags)
	if refused != "" {
		ok, why = false, "which keyspace events the server publishes is unknown ("+refused+"): counts are those of the last pass"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if flags != l.flags {
		l.heardNew = false
	}
	l.flags, l.flagsOK, l.flagsWhy, l.flagsRead = flags, ok, why, true
	// With n hidden behind A, the events since the Reset count once a
	// "new" shows n was on (Live).
	if !ok && (refused != "" || !NewHidden(flags)) {
		l.flagsSpoiled = true
	}
	l.refused = refused != ""
}

// Follow feeds l from c's keyspace events (its one subscription, shared
// with every other consumer) until remove is called.
func (l *liveCounts) Follow(c *redisview.Conn) (remove func()) {
	return c.OnKeyEvent(l.Event, l.Subscribed)
}

// FlagsFrom is Flags from what c's keyspace watchers last read
// (redisview.Conn's Keyspace: re-read every minute while subscribed).
func (l *liveCounts) FlagsFrom(st redisview.KeyspaceState) {
	switch {
	case st.Checked.IsZero(): // not read yet
		return
	case st.Refused:
		l.Flags("", st.Why)
	default:
		l.Flags(st.Flags, "")
	}
}

// Event applies one keyspace event (OnKeyEvent's callback); events of
// other databases are ignored, but counted against the flood limit.
func (l *liveCounts) Event(db int, key, event string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reset.IsZero() || l.floodWhy != "" || l.flooded() || db != l.db {
		return
	}
	var d int64
	switch event {
	case "new":
		d = 1
		l.heardNew = true
		l.recent[l.nrecent%len(l.recent)] = l.keyHash(key)
		l.nrecent++
	case "del", "expired", "evicted", "rename_from", "move_from":
		d = -1
	case "rename_to", "copy_to", "restore":
		h := l.keyHash(key)
		for i, r := range l.recent {
			if r == h {
				l.unsure++
				l.recent[i] = 0
				break
			}
		}
		return
	default:
		return
	}
	l.total += d
	if l.cl == nil { // no pack: every key is of no family
		l.unm += d
	} else if f, ok := l.cl.Classify(db, key); ok {
		l.fam[f] += d
	} else {
		l.unm += d
	}
}

// clockEvery: the flood check reads the clock at every clockEvery-th
// event only (reading it was a third of an event's cost); a second's
// count may then take in up to clockEvery-1 events of the next, nothing
// beside MaxKeyEventRate.
const clockEvery = 64

// flooded counts an event against the rate limit and reports whether
// following them was given up. Called with l.mu held.
func (l *liveCounts) flooded() bool {
	l.winN++
	if l.tick++; l.tick%clockEvery != 1 && !l.win.IsZero() {
		return false
	}
	now := l.clock.Now()
	if el := now.Sub(l.win); el >= time.Second || el < 0 {
		switch {
		case el >= 2*time.Second || el < 0: // a quiet second between
			l.hot = 0
		case l.winN-1 > l.maxRate:
			l.hot++
		default:
			l.hot = 0
		}
		l.win, l.winN = now, 1
	}
	if l.hot >= FloodSeconds {
		l.floodWhy = fmt.Sprintf("more than %d key events per second for %d s: counts are those of the last pass",
			l.maxRate, FloodSeconds)
		return true
	}
	return false
}

// Deltas returns the change in keys since the last Reset, by family, of no
// family (unmatched), and in all. The map is the caller's.
func (l *liveCounts) Deltas() (perFamily map[*schema.Family]int64, unmatched, total int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	perFamily = make(map[*schema.Family]int64, len(l.fam))
	for f, d := range l.fam {
		if d != 0 {
			perFamily[f] = d
		}
	}
	return perFamily, l.unm, l.total
}

// Unsure is how many of the keys counted in since the last Reset may have
// replaced an existing key of the same name (RENAME onto an existing name,
// COPY or RESTORE with REPLACE): the true total lies between total −
// Unsure and total.
func (l *liveCounts) Unsure() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unsure
}

// Live says whether the deltas hold every event since the last Reset:
// the subscription was up before it and has not broken since, the
// server's flags publish every event counted (or, with n hidden behind A,
// a "new" was heard), and no flood was given up on. since is the Reset:
// live or not, the pass's counts are as of then, and the deltas count
// from then. why says, when not live, why the counts are those of the
// last pass.
func (l *liveCounts) Live() (ok bool, since time.Time, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	since = l.reset
	switch {
	case l.reset.IsZero():
		return false, since, "no pass has finished yet"
	case l.floodWhy != "":
		return false, since, l.floodWhy
	case !l.flagsRead:
		return false, since, "notify-keyspace-events has not been read yet"
	case !l.flagsOK && (l.refused || !NewHidden(l.flags) || !l.heardNew):
		return false, since, l.flagsWhy
	case l.flagsSpoiled:
		return false, since, "keyspace events were off during part of the time since the last pass: counts are those of the last pass until the next"
	case !l.sub:
		return false, since, "not subscribed to keyspace events: counts are those of the last pass"
	case l.subSince.After(l.reset):
		return false, since, "keyspace events followed only since " + l.subSince.UTC().Format("15:04:05") +
			", after the last pass: counts are those of the last pass until the next"
	}
	return true, since, ""
}

// Drift thresholds: a database whose key count from INFO keyspace
// differs from the one kept by more than DriftFraction of it (and by at
// least one key) has drifted — events were lost or never published
// (FLUSHDB, SWAPDB, a replica's full resync) — and wants a new pass. On
// a database under a thousand keys any difference is drift (a pass over
// it is cheap); on ten million, ten thousand keys.
//
// The INFO reply and the events travel on two connections: on a busy
// database the events published just before INFO may not be applied yet
// (the event rate times the subscription's delay, a few keys). The
// fraction covers that on a large database; on a small busy one such a
// lag can read as drift, which costs a pass over a small database. Read
// Deltas (Drifted does) just after INFO, not before it.
const DriftFraction = 0.001

// drifted reports whether a kept key count (the last pass's total plus
// the deltas since) is too far from the database's count (INFO keyspace
// or DBSIZE): by more than DriftFraction of the database's count.
func drifted(expected, actual int64) bool {
	diff := expected - actual
	if diff < 0 {
		diff = -diff
	}
	return diff > int64(DriftFraction*float64(actual))
}

// Drifted compares the kept total — passTotal, the last pass's count of
// the database, plus the deltas since — with the database's count from
// INFO keyspace: keys counted in that may have replaced another (Unsure)
// may be one too many each. why says it in words.
func (l *liveCounts) Drifted(passTotal, infoKeys int64) (bool, string) {
	l.mu.Lock()
	hi := passTotal + l.total
	lo := hi - l.unsure
	l.mu.Unlock()
	expected := hi
	if infoKeys < hi {
		expected = max(lo, infoKeys)
	}
	if !drifted(expected, infoKeys) {
		return false, ""
	}
	return true, fmt.Sprintf("the server holds %d keys, the counts kept add up to %d: keys changed without events (FLUSHDB, SWAPDB, a lost subscription)",
		infoKeys, hi)
}

// silentCommands change keys without a keyspace event per key: FLUSHDB and
// FLUSHALL empty databases, SWAPDB exchanges two (leaving INFO keyspace's
// totals as they were when the two held as many keys, so that Drifted
// cannot see it).
var silentCommands = []string{"flushall", "flushdb", "swapdb"}

// commandCalls is INFO commandstats as calls by command ("flushdb"), and
// the calls of all commands.
func commandCalls(in Info) (map[string]int64, int64) {
	out := map[string]int64{}
	var all int64
	for name, val := range in["commandstats"] {
		cmd, ok := strings.CutPrefix(name, "cmdstat_")
		if !ok {
			continue
		}
		for kv := range strings.SplitSeq(val, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err == nil {
					out[cmd] = n
					all += n
				}
				break
			}
		}
	}
	return out, all
}

// silentWrites compares two readings of INFO commandstats of one server
// (the first at a pass's end, the second now) and names what changed keys
// without per-key events in between: FLUSHDB, FLUSHALL or SWAPDB run (on
// any database: commandstats do not say which), or the statistics reset
// (CONFIG RESETSTAT, a restart), after which nobody can tell. Empty: none.
// A reading without commandstats (refused INFO section) tells nothing.
func silentWrites(before, after Info) []string {
	if !before.Has("commandstats") || !after.Has("commandstats") {
		return nil
	}
	b, ball := commandCalls(before)
	a, aall := commandCalls(after)
	if aall < ball {
		return []string{"CONFIG RESETSTAT or a restart (command statistics were reset)"}
	}
	var out []string
	for _, cmd := range silentCommands {
		if a[cmd] != b[cmd] {
			out = append(out, strings.ToUpper(cmd))
		}
	}
	return out
}
