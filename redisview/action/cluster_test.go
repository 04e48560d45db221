package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/schema"
)

// clusterFixture is a fixture whose connection is a 3-primary cluster
// (detected, as the monitor does), with the audit log on a standalone
// server of its own.
type clusterFixture struct {
	*fixture
	cl *redistest.Cluster
	cc *redis.ClusterClient
}

func clusterSetup(t *testing.T, opts Options) *clusterFixture {
	t.Helper()
	t.Parallel()
	f := &fixture{t: t, ctx: context.Background()}
	cl := redistest.StartCluster(t)
	f.audSrv = redistest.Start(t)
	f.conn = f.open(cl.URL())
	if err := f.conn.Detect(f.ctx); err != nil {
		t.Fatal(err)
	}
	if !f.conn.IsCluster() {
		t.Fatal("the connection did not detect the cluster")
	}
	f.audit = f.audSrv.Client(15)
	f.r = New(f.audit, opts)
	return &clusterFixture{fixture: f, cl: cl, cc: cl.Client()}
}

// tsnap is a key's DUMP and PTTL, and when they were read.
type tsnap struct {
	snap
	at time.Time
}

// csnap is a key's DUMP and PTTL read through the cluster client.
func (f *clusterFixture) csnap(key string) tsnap {
	f.t.Helper()
	return readSnap(f.t, f.cc, key)
}

func readSnap(t *testing.T, c redis.Cmdable, key string) tsnap {
	t.Helper()
	at := time.Now()
	d, err := c.Dump(t.Context(), key).Result()
	if err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	pttl, err := c.PTTL(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return tsnap{snap{d, pttl}, at}
}

// sameSnap fails unless got holds want's value and expires when want
// did (its TTL less the time between the reads), within 2 s.
func sameSnap(t *testing.T, key string, got, want tsnap) {
	t.Helper()
	if got.dump != want.dump {
		t.Fatalf("%s holds %q, want %q", key, got.dump, want.dump)
	}
	if (want.pttl < 0) != (got.pttl < 0) {
		t.Fatalf("%s has TTL %v, want %v", key, got.pttl, want.pttl)
	}
	if want.pttl >= 0 {
		if left := want.pttl - got.at.Sub(want.at); (left - got.pttl).Abs() > 2*time.Second {
			t.Fatalf("%s has TTL %v, want about %v (%v %s before)", key, got.pttl, left, want.pttl, got.at.Sub(want.at).Round(time.Millisecond))
		}
	}
}

func TestSlotGroups(t *testing.T) {
	tests := []struct {
		keys   []string
		groups string // slot:keys …
	}{
		// Slots as Redis's CLUSTER KEYSLOT answers them.
		{[]string{"foo"}, "12182:[foo]"},
		{[]string{"foo", "bar"}, "12182:[foo] 5061:[bar]"},
		{[]string{"{user1000}.following", "{user1000}.followers"}, "3443:[{user1000}.following {user1000}.followers]"},
		// The tag is the first {…} with something in it; {} hashes the whole key.
		{[]string{"foo{}{bar}", "foo{}{bar}x"}, "8363:[foo{}{bar}] 10673:[foo{}{bar}x]"},
		{[]string{"foo{{bar}}zap", "{bar"}, "4015:[foo{{bar}}zap {bar]"},
		{[]string{"foo{bar}{zap}", "bar", "x{bar}"}, "5061:[foo{bar}{zap} bar x{bar}]"},
		// Bytes, not runes: an invalid UTF-8 tag is hashed as it is.
		{[]string{"a{\xff}1", "b{\xff}2", "\xff"}, fmt.Sprintf("%d:[a{\xff}1 b{\xff}2 \xff]", redistest.Slot("\xff"))},
		{nil, ""},
	}
	for _, tt := range tests {
		var parts []string
		for _, g := range SlotGroups(tt.keys) {
			parts = append(parts, fmt.Sprintf("%d:%v", g.Slot, g.Keys))
			for _, k := range g.Keys {
				if g.Slot != redistest.Slot(k) {
					t.Errorf("%q in slot %d, the harness says %d", k, g.Slot, redistest.Slot(k))
				}
			}
		}
		if got := strings.Join(parts, " "); got != tt.groups {
			t.Errorf("SlotGroups(%q) = %s, want %s", tt.keys, got, tt.groups)
		}
		err := CrossSlot(tt.keys)
		if (err != nil) != (len(SlotGroups(tt.keys)) > 1) {
			t.Errorf("CrossSlot(%q) = %v", tt.keys, err)
		}
	}
	err := CrossSlot([]string{"board", "board:meta\xff"})
	wantErr(t, err, ErrCrossSlot, fmt.Sprintf(`"board" (slot %d), "board:meta\xff" (slot %d)`, Slot("board"), Slot("board:meta\xff")))
	wantErr(t, err, ErrInvalid, "2 keys are in 2 slots")
}

// execOn checks that, since its last call (the first call only counts),
// the cluster's primaries ran n transactions (EXEC), every one on on.
func (f *clusterFixture) execOn(last map[string]int64, on *redistest.Server, n int64) {
	f.t.Helper()
	for _, p := range f.cl.Primaries() {
		calls, err := p.CommandCalls(f.ctx)
		if err != nil {
			f.t.Fatal(err)
		}
		want := int64(0)
		if p == on {
			want = n
		}
		if prev, ok := last[p.Addr]; ok && calls["exec"]-prev != want {
			d := calls["exec"] - prev
			f.t.Errorf("%d EXEC on %s, want %d (the key is on %s)", d, p.Addr, want, on.Addr)
		}
		last[p.Addr] = calls["exec"]
	}
}

// An action on one key, and its undo, on a key of each primary: WATCH and
// MULTI/EXEC run on the node of the key's slot, and nowhere else.
func TestClusterSingleKeyActionAndUndoOnEachPrimary(t *testing.T) {
	f := clusterSetup(t, Options{})
	execs := map[string]int64{}
	for i, p := range f.cl.Primaries() {
		key := f.cl.KeyOn(p, fmt.Sprintf("act:%d:", i))
		seed(t, f.cc, "hash", key, 90*time.Minute)
		before := f.csnap(key)
		f.execOn(execs, p, 0)

		out := f.mustRun(admin, KindSetTTL, f.req(0, key, "ttl", "10m"))
		f.execOn(execs, p, 1)
		if d := f.cc.PTTL(f.ctx, key).Val(); d > 10*time.Minute || d < 9*time.Minute {
			t.Fatalf("%s on %s: TTL %v after set-ttl 10m (%+v)", key, p.Addr, d, out)
		}
		f.mustRun(admin, KindUndo, UndoRequest(f.last()))
		f.execOn(execs, p, 1)
		sameSnap(t, key, f.csnap(key), before)

		f.mustRun(admin, KindDeleteKey, f.req(0, key))
		if f.cc.Exists(f.ctx, key).Val() != 0 {
			t.Fatalf("%s on %s not deleted", key, p.Addr)
		}
		f.execOn(execs, p, 1)
		f.mustRun(admin, KindUndo, UndoRequest(f.last()))
		f.execOn(execs, p, 1)
		sameSnap(t, key, f.csnap(key), before)
	}
}

// A multi-key action whose keys are in different slots is refused at the
// preview, naming the keys and their slots, and at execution too (a
// confirmation made otherwise): nothing is written.
func TestClusterCrossSlotActionIsRefused(t *testing.T) {
	f := clusterSetup(t, Options{Kinds: []Kind{deletePair{}}})
	a, b := "board", "board:meta"
	if Slot(a) == Slot(b) {
		t.Fatal("the test's keys share a slot")
	}
	seed(t, f.cc, "zset", a, 0)
	seed(t, f.cc, "hash", b, time.Hour)
	_, err := f.r.Preview(f.ctx, support, f.conn, "delete-pair", f.req(0, a, "other", b))
	wantErr(t, err, ErrCrossSlot, fmt.Sprintf(`"board" (slot %d), "board:meta" (slot %d)`, Slot(a), Slot(b)))

	// A confirmation of two keys of one slot, its other key changed to one
	// of another slot (a stale or forged confirmation): refused, recorded.
	x, y := "{board}:a", "{board}:b"
	seed(t, f.cc, "set", x, 0)
	seed(t, f.cc, "set", y, 0)
	pv, err := f.r.Preview(f.ctx, support, f.conn, "delete-pair", f.req(0, x, "other", y))
	if err != nil {
		t.Fatal(err)
	}
	pv.Request.Args["other"] = b
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrCrossSlot, `"board:meta" (slot`)
	if n := f.cc.Exists(f.ctx, a).Val() + f.cc.Exists(f.ctx, b).Val() + f.cc.Exists(f.ctx, x).Val(); n != 3 {
		t.Fatalf("%d of 3 keys left", n)
	}
	if rec := f.last(); rec.Outcome != OutcomeRefused || !strings.Contains(rec.Error, "slot") {
		t.Fatalf("audit %+v", rec)
	}
}

// Keys sharing a hash tag share a slot: the multi-key action runs in one
// transaction on that slot's node, and undo restores both, TTL included.
func TestClusterHashTaggedActionAndUndo(t *testing.T) {
	f := clusterSetup(t, Options{Kinds: []Kind{deletePair{}}})
	for i, p := range f.cl.Primaries() {
		tag := f.cl.KeyOn(p, fmt.Sprintf("user%d:", i))
		a, b := "{"+tag+"}:board", "lb:{"+tag+"}:meta\xff"
		seed(t, f.cc, "zset", a, 0)
		seed(t, f.cc, "hash", b, time.Hour)
		before := map[string]tsnap{a: f.csnap(a), b: f.csnap(b)}
		f.mustRun(support, "delete-pair", f.req(0, a, "other", b))
		if n := f.cc.Exists(f.ctx, a).Val() + f.cc.Exists(f.ctx, b).Val(); n != 0 {
			t.Fatalf("%d keys left on %s", n, p.Addr)
		}
		f.mustRun(admin, KindUndo, UndoRequest(f.last()))
		for k, want := range before {
			sameSnap(t, k, f.csnap(k), want)
		}
	}
}

// A registered multi-key kind, the gateway's release of a reservation
// (the reservation and every concurrency set, read under WATCH): its keys
// are in other slots, so a cluster refuses it in the preview by name.
func TestClusterReleaseReservationAcrossSlotsIsRefused(t *testing.T) {
	f := clusterSetup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("gateway"))
	f.cc.SAdd(f.ctx, "q:conc:gk_a", "req_a1")
	f.cc.Set(f.ctx, "q:reserved:req_old", 4096, 0)
	_, err := f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_old"))
	wantErr(t, err, ErrCrossSlot, fmt.Sprintf(`"q:conc:gk_a" (slot %d)`, Slot("q:conc:gk_a")))
	if f.cc.Exists(f.ctx, "q:reserved:req_old").Val() != 1 {
		t.Fatal("released")
	}
}

// synced waits until p's replica has acknowledged every write p made.
func (f *clusterFixture) synced(p *redistest.Server) {
	f.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer c.Close()
	field := func(info, name string) int64 {
		for _, line := range strings.Split(info, "\r\n") {
			v, ok := strings.CutPrefix(line, name+":")
			switch {
			case !ok:
			case name == "slave0": // ip=…,port=…,state=online,offset=N,lag=0
				for _, kv := range strings.Split(v, ",") {
					if v, ok := strings.CutPrefix(kv, "offset="); ok {
						n, _ := strconv.ParseInt(v, 10, 64)
						return n
					}
				}
			default:
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		return -1
	}
	want := field(c.Info(f.ctx, "replication").Val(), "master_repl_offset")
	redistest.Eventually(f.t, 10*time.Second, "the replica of "+p.Addr+" has every write", func() bool {
		return field(c.Info(f.ctx, "replication").Val(), "slave0") >= want
	})
}

// The primary of the keys' slot is killed during the confirmation, after
// the intent is recorded and before EXEC reaches it: once its replica is
// promoted, nothing is changed, the audit says so, and the same
// confirmation then runs there; its undo restores both keys, TTL included.
func TestClusterFailoverBeforeExec(t *testing.T) {
	var kill atomic.Pointer[func()]
	f := clusterSetup(t, Options{Kinds: []Kind{deletePair{}}, beforeExec: func() {
		if k := kill.Swap(nil); k != nil {
			(*k)()
		}
	}})
	p := f.cl.Primaries()[0]
	tag := f.cl.KeyOn(p, "fo:")
	a, b := "{"+tag+"}:board", "{"+tag+"}:meta"
	seed(t, f.cc, "zset", a, 0)
	seed(t, f.cc, "hash", b, time.Hour)
	before := map[string]tsnap{a: f.csnap(a), b: f.csnap(b)}
	f.synced(p)
	pv, err := f.r.Preview(f.ctx, support, f.conn, "delete-pair", f.req(0, a, "other", b))
	if err != nil {
		t.Fatal(err)
	}
	k := func() { p.Stop(); f.cl.WaitFailover(p, time.Minute) }
	kill.Store(&k)
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrRedis, "nothing was changed")
	f.cc = f.cl.Client() // one that never knew the dead node as a primary
	for key, want := range before {
		sameSnap(t, key, f.csnap(key), want)
	}
	o := f.outcomes("delete-pair")
	if len(o) != 1 || o[0].Outcome != OutcomeFailed || !strings.Contains(o[0].Error, "nothing was changed") {
		t.Fatalf("audit %+v", o)
	}

	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatalf("the confirmation again after the failover: %v", err)
	}
	if n := f.cc.Exists(f.ctx, a, b).Val(); n != 0 {
		t.Fatalf("%d keys left", n)
	}
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	for key, want := range before {
		sameSnap(t, key, f.csnap(key), want)
	}
}

// An action recorded before its slot's primary fails is undone on the
// promoted replica: value and TTL as they were.
func TestClusterUndoAfterFailover(t *testing.T) {
	f := clusterSetup(t, Options{})
	p := f.cl.Primaries()[1]
	key := f.cl.KeyOn(p, "undo:")
	seed(t, f.cc, "hash", key, 90*time.Minute)
	before := f.csnap(key)
	f.mustRun(admin, KindDeleteKey, f.req(0, key))
	rec := f.last()
	f.synced(p)
	p.Stop()
	f.cl.WaitFailover(p, time.Minute)
	f.cc = f.cl.Client()
	if f.cc.Exists(f.ctx, key).Val() != 0 {
		t.Fatal("the promoted replica has the key the action deleted")
	}
	f.mustRun(admin, KindUndo, UndoRequest(rec))
	sameSnap(t, key, f.csnap(key), before)
}

// banPack0 is the eIsland ban list moved to database 0 (a cluster has no
// other): its bloom and its set are in two slots.
const banPack0 = `name: bans0
title: ban list in database 0
families:
  - id: user-ban-bloom
    db: 0
    pattern: "user:ban:bloom"
    type: string
    ttl: none
    domain: User ban
    description: Bloom filter of banned usernames.
    role: bloom
    params:
      bits: 1000003
      hashes: 6
      scheme: crc32-javahash-double
      members: "user:ban:set"
      purpose: ban
  - id: user-ban-set
    db: 0
    pattern: "user:ban:set"
    type: set
    ttl: none
    domain: User ban
    description: Exact banned username set.
    role: bloom-members
    params:
      bloom: "user:ban:bloom"
`

// On a cluster a ban, an unban (the set and the bloom) and a rebuild of
// the bloom from its set (the set only read under WATCH, by the plan's
// preparer) are each refused in the preview, naming both keys.
func TestClusterBanListActionsAcrossSlotsAreRefused(t *testing.T) {
	f := clusterSetup(t, Options{})
	pack, err := schema.Load("bans0", []byte(banPack0))
	if err != nil {
		t.Fatal(err)
	}
	f.conn.ForcePack(pack)
	if Slot(banBloom) == Slot(banSet) {
		t.Fatal("the bloom and its set share a slot")
	}
	f.cc.SetBit(f.ctx, banBloom, banBits-1, 0)
	f.cc.SAdd(f.ctx, banSet, "mallory")
	set, bloom := fmt.Sprintf("%q (slot %d)", banSet, Slot(banSet)), fmt.Sprintf("%q (slot %d)", banBloom, Slot(banBloom))
	for _, tc := range []struct {
		kind string
		req  Request
		want string
	}{
		{KindBan, f.req(0, banSet, ArgName, "eve"), set + ", " + bloom},
		{KindUnban, f.req(0, banSet, ArgName, "mallory"), set + ", " + bloom},
		{KindRebuildBloom, f.req(0, banBloom), bloom + ", " + set},
	} {
		_, err := f.r.Preview(f.ctx, admin, f.conn, tc.kind, tc.req)
		wantErr(t, err, ErrCrossSlot, tc.want)
	}
	if !f.cc.SIsMember(f.ctx, banSet, "mallory").Val() || f.cc.SIsMember(f.ctx, banSet, "eve").Val() {
		t.Fatal("the set changed")
	}
}

// vertique's buckets, one key and one slot each, are reset on the primary
// of their slot, on every primary, and undone there to their exact bytes
// and expiry.
func TestClusterResetVertiqueBucketOnEachPrimary(t *testing.T) {
	f := clusterSetup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("vertique"))
	if err := demo.SeedVertique(f.ctx, f.cc, time.Now(), demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	execs := map[string]int64{}
	for _, p := range f.cl.Primaries() {
		keys, _, err := p.Client(0).Scan(f.ctx, 0, "*:v1:*", 1000).Result()
		if err != nil || len(keys) == 0 {
			t.Fatalf("no vertique bucket on %s (%v)", p.Addr, err)
		}
		key := keys[0]
		before := f.csnap(key)
		f.execOn(execs, p, 0)
		f.mustRun(support, KindResetLimit, f.req(0, key))
		if f.cc.Exists(f.ctx, key).Val() != 0 {
			t.Fatalf("bucket %s on %s not reset", key, p.Addr)
		}
		f.execOn(execs, p, 1)
		f.mustRun(admin, KindUndo, UndoRequest(f.last()))
		f.execOn(execs, p, 1)
		sameSnap(t, key, f.csnap(key), before)
	}
}
