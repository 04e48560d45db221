package apiv1

import (
	"strconv"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
)

func TestLocksMapsHolderTTLAndAge(t *testing.T) {
	p := pack(t, "eisland")
	held := limitRowOf(t, p, 10, "payment:order:op-lock:T\xfe1")
	held.PTTL, held.State = 10*time.Second, decode.HeldRow{Holder: "6f1c-holder"}
	forever := limitRowOf(t, p, 10, "payment:order:op-lock:T2")
	forever.PTTL, forever.State = -1, decode.HeldRow{Holder: "x", HolderCut: true}
	login := limitRowOf(t, p, 6, "auth:limit:login:lock:alice")
	login.PTTL, login.State = 5*time.Minute, decode.HeldRow{Holder: strconv.FormatInt(t0.Add(5*time.Minute).UnixMilli(), 10)}
	fam := func(rows ...limits.Row) limits.FamilySnap {
		return limits.FamilySnap{Family: rows[0].Family, DB: rows[0].DB, Class: decode.ClassLock, Rows: rows, Total: int64(len(rows)), Passes: 1, Read: true}
	}
	snap := limitsSnap(p, fam(held, forever), fam(login))
	snap.Keyspace = limits.Keyspace{Why: "notify-keyspace-events is off"}
	page := Locks("eisland", matched(p), up(), snap, "", t0, nil)

	byKey := map[string]LockRow{}
	fams := map[string]LockFamily{}
	for _, f := range page.Families.Items {
		fams[f.ID] = f
		for _, r := range f.Rows {
			byKey[string(r.Key)] = r
		}
	}
	h := byKey[held.Key]
	if h.Holder == nil || *h.Holder != "6f1c-holder" || h.TTLMs != 9000 || h.AgeMs == nil || *h.AgeMs != 6000 || h.NoTTL {
		t.Errorf("held lock %+v", h)
	}
	f := byKey[forever.Key]
	if !f.NoTTL || f.TTLMs != -1 || f.AgeMs != nil || !f.HolderCut {
		t.Errorf("lock without TTL %+v", f)
	}
	l := byKey[login.Key]
	if l.UnlocksAt == nil || !l.UnlocksAt.Equal(t0.Add(5*time.Minute)) || l.Holder != nil {
		t.Errorf("login lock %+v", l)
	}
	if op := fams["order-op-lock"]; op.Value != LockValueUUID || *op.MaxTTLMs != 15000 || op.Rows[0].Key != Name(forever.Key) {
		t.Errorf("order-op-lock family %+v (the lock without TTL comes first)", op)
	}
	if fams["login-lock"].Value != LockValueEpochMs {
		t.Errorf("login-lock value %q", fams["login-lock"].Value)
	}
	if page.Short.Counted || page.Short.Count != nil || page.Short.Why == "" {
		t.Errorf("short locks %+v: not counted, and why", page.Short)
	}
	has(t, page, `"key":{"b64":"`, `"ttl_ms":-1`, `"age_ms":6000`, `"unlocks_at":"2026-12-01T20:05:00Z"`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)
}

func TestLocksSensitiveHolderNeverSent(t *testing.T) {
	p := pack(t, "eisland")
	r := limitRowOf(t, p, 10, "payment:order:op-lock:T3")
	r.Family, r.State = sensitive(r.Family), decode.HeldRow{Holder: "secret-holder"}
	snap := limitsSnap(p, limits.FamilySnap{Family: r.Family, DB: 10, Class: decode.ClassLock, Rows: []limits.Row{r}, Total: 1, Passes: 1, Read: true})
	snap.Keyspace = limits.Keyspace{On: true, ShortLocks: 3, Since: t0.Add(-time.Hour)}
	page := Locks("eisland", matched(p), up(), snap, "", t0, nil)
	hasNot(t, page, "secret-holder")
	has(t, page, `"value_hidden":true`, `"short":{"counted":true,"count":3,"since":"2026-12-01T19:00:00Z"}`)
}

func TestLocksEmptyAndUnread(t *testing.T) {
	p := pack(t, "eisland")
	page := Locks("eisland", matched(p), up(), limits.Snapshot{Budget: limits.DefaultBudget}, "", t0, nil)
	if page.Sweep.State != SweepStarting {
		t.Errorf("sweep %+v", page.Sweep)
	}
	has(t, page, `"families":{"items":[],"next":null}`)
	conforms(t, page)
	page = Locks("eisland", matched(p), up(), limitsSnap(p), "", t0, nil)
	for _, f := range page.Families.Items {
		if f.Rows == nil {
			t.Errorf("family %s: rows null", f.ID)
		}
	}
	has(t, page, `"rows":[]`)
}

// A lock without a TTL says so (no_ttl, ttl_ms -1) whether or not its
// value was read: a sensitive family's (never read) and one whose value
// could not be read as a lock (the row carries why) alike.
func TestLockWithoutTTLIsNoTTLWhateverItsValue(t *testing.T) {
	p := pack(t, "eisland")
	hidden := limitRowOf(t, p, 10, "payment:order:op-lock:T4")
	hidden.Family, hidden.PTTL, hidden.State = sensitive(hidden.Family), -1, decode.HeldRow{}
	broken := limitRowOf(t, p, 10, "payment:order:op-lock:T5")
	broken.PTTL, broken.Err = -1, "WRONGTYPE Operation against a key holding the wrong kind of value"
	for _, r := range []limits.Row{hidden, broken} {
		snap := limitsSnap(p, limits.FamilySnap{Family: r.Family, DB: 10, Class: decode.ClassLock, Rows: []limits.Row{r}, Total: 1, Passes: 1, Read: true})
		page := Locks("eisland", matched(p), up(), snap, "", t0, nil)
		if len(page.Families.Items) == 0 || len(page.Families.Items[0].Rows) != 1 {
			t.Fatalf("%s: no row: %+v", r.Key, page.Families)
		}
		if row := page.Families.Items[0].Rows[0]; !row.NoTTL || row.TTLMs != -1 {
			t.Errorf("%s: no_ttl %v ttl_ms %d, want true, -1", r.Key, row.NoTTL, row.TTLMs)
		}
	}
}
