package action

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A sensitive key can be written, and its value never comes back: not in
// the preview, the outcome, the audit log or an error; not undoable, and
// said so.
func TestEditSensitiveShowsSizesOnly(t *testing.T) {
	f := setup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("eisland"))
	const (
		key    = "totp:security:secret:plain:alice"
		secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
		newer  = "KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU"
	)
	var seen []string
	look := func(what string) {
		t.Helper()
		for _, s := range seen {
			for _, v := range []string{secret, newer, hex.EncodeToString([]byte(newer)), base64.StdEncoding.EncodeToString([]byte(newer)), secret[:12], newer[:12]} {
				if strings.Contains(s, v) {
					t.Fatalf("%s leaks %q in %q", what, v, s)
				}
			}
		}
	}
	for _, step := range []struct{ kind, value string }{{KindCreateKey, secret}, {KindSetString, newer}} {
		req := f.req(5, key, ArgValue, step.value)
		if step.kind == KindCreateKey {
			req.Args[ArgType] = "string"
		}
		pv, err := f.r.Preview(f.ctx, admin, f.conn, step.kind, req)
		if err != nil {
			t.Fatal(err)
		}
		if pv.Undoable || !strings.Contains(pv.Summary, "32 bytes (sensitive, not shown)") {
			t.Fatalf("%s preview: %+v", step.kind, pv)
		}
		out, err := f.r.Execute(f.ctx, admin, f.conn, pv)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, pv.Summary, strings.Join(pv.Notes, " "), out.Summary, out.Changes[0].Text, out.Changes[0].Before.Excerpt)
		look(step.kind)
	}
	if f.db(5).Get(f.ctx, key).Val() != newer {
		t.Fatal("the sensitive key was not written")
	}
	// A no-op on a sensitive key is not refused by comparing its value.
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindSetString, f.req(5, key, ArgValue, newer))
	if err != nil {
		t.Fatalf("set-string to the value it holds: %v", err)
	}
	seen = append(seen, pv.Summary)
	for _, m := range f.raw() {
		for k, v := range m.Values {
			seen = append(seen, k+"="+v.(string))
		}
	}
	look("the audit log")
	rec := f.last()
	if rec.Args[ArgValue] != PriorSensitive {
		t.Fatalf("audit record keeps %q", rec.Args[ArgValue])
	}
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindUndo, UndoRequest(rec))
	wantErr(t, err, ErrNotUndoable, "sensitive")
}

// Values the pack knows the shape of are checked: a token bucket keeps
// numbers in tokens and ts and stays a hash, a Bucket4j state stays one.
func TestEditRefusesWhatBreaksThePacksShape(t *testing.T) {
	f := setup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("eisland"))
	bucket := "verify:slider:rate:create:ip:MTI3LjAuMC4x"
	f.db(4).HSet(f.ctx, bucket, "tokens", "3", "ts", "1700000000000")
	for _, c := range []struct {
		kind string
		args []string
		want string
	}{
		{KindSetHashField, []string{ArgField, "tokens", ArgValue, "many"}, `keep field "tokens" as a number`},
		{KindSetHashField, []string{ArgField, "ts", ArgValue, "NaN"}, `keep field "ts" as a number`},
		{KindCreateKey, []string{ArgType, "hash", ArgValue, `{"tokens": "3"}`}, `have a field "ts"`},
		{KindCreateKey, []string{ArgType, "string", ArgValue, "3"}, "are of type hash, not string"},
	} {
		key := bucket
		if c.kind == KindCreateKey {
			key = "verify:slider:rate:create:ip:MTAuMC4wLjE="
		}
		_, err := f.r.Preview(f.ctx, admin, f.conn, c.kind, f.req(4, key, c.args...))
		wantErr(t, err, ErrInvalid, c.want)
	}
	f.mustRun(admin, KindSetHashField, f.req(4, bucket, ArgField, "tokens", ArgValue, "12"))
	f.mustRun(admin, KindCreateKey, f.req(4, "verify:slider:rate:create:ip:MTAuMC4wLjE=", ArgType, "hash", ArgValue, `{"tokens": "12", "ts": "1700000000000"}`))

	f.conn.ForcePack(schema.BuiltinPack("vertique"))
	b4 := "vertique:rate-limit:v1:0123abcd:" + strings.Repeat("ab", 32)
	state := demo.EncodeBucketState(demo.BucketState{Format: 1,
		Bandwidths: []demo.Bandwidth{{Capacity: 10, InitialTokens: 10, RefillPeriodNanos: int64(time.Minute), RefillTokens: 10, TimeOfFirstRefillMillis: demo.NotAligned}},
		States:     []demo.BandwidthState{{LastRefillNanos: time.Now().UnixNano(), Tokens: 4}}})
	f.db(0).Set(f.ctx, b4, state, time.Hour)
	_, err := f.r.Preview(f.ctx, admin, f.conn, KindSetString, f.req(0, b4, ArgValue, "10"))
	wantErr(t, err, ErrInvalid, "Bucket4j bucket state")
	next := demo.EncodeBucketState(demo.BucketState{Format: 1,
		Bandwidths: []demo.Bandwidth{{Capacity: 10, InitialTokens: 10, RefillPeriodNanos: int64(time.Minute), RefillTokens: 10, TimeOfFirstRefillMillis: demo.NotAligned}},
		States:     []demo.BandwidthState{{LastRefillNanos: time.Now().UnixNano(), Tokens: 10}}})
	f.mustRun(admin, KindSetString, f.req(0, b4, ArgValue, hex.EncodeToString(next), ArgEncoding, EncodingHex))
	if f.db(0).Get(f.ctx, b4).Val() != string(next) || pttlOf(t, f.db(0), b4) <= 0 {
		t.Fatal("the bucket state was not written with its TTL kept")
	}
}

// Bad input is refused with a message saying what is wrong; a viewer or
// support user may not edit; a no-op is refused.
func TestEditRefusesBadInput(t *testing.T) {
	f := setup(t, Options{})
	c := f.db(0)
	seedEdit(t, c, "l", "list")
	seedEdit(t, c, "s", "set")
	seedEdit(t, c, "h", "hash")
	for _, x := range []struct {
		kind, key string
		args      []string
		want      string
	}{
		{KindSetListElement, "l", []string{ArgIndex, "3", ArgValue, "v"}, "out of range"},
		{KindSetListElement, "l", []string{ArgIndex, "one", ArgValue, "v"}, "not an integer"},
		{KindPushList, "l", []string{ArgSide, "middle", ArgValue, "v"}, "left or right"},
		{KindPushList, "s", []string{ArgSide, "left", ArgValue, "v"}, "is a set, not a list"},
		{KindSetString, "l", []string{ArgValue, "v", ArgEncoding, EncodingHex}, "not hex"},
		{KindAddSetMember, "s", []string{ArgMember, "m\u200b"}, "already in"},
		{KindAddZSetMember, "z", []string{ArgMember, "m", ArgScore, "high"}, "not a number"},
		{KindAddStreamEntry, "x", []string{ArgFields, `["a"]`}, "JSON object"},
		{KindAddStreamEntry, "x", []string{ArgFields, `{"a": "1", "a": "2"}`}, "twice"},
		{KindAddStreamEntry, "x", []string{ArgFields, `{"a": "1"}`, ArgEntryID, "0-0"}, "entry id"},
		{KindSetHashField, "h", []string{ArgField, "f", ArgValue, "1"}, "already holds"},
		{KindCreateKey, "n", []string{ArgType, "bitmap", ArgValue, "1"}, "type"},
		{KindCreateKey, "n", []string{ArgType, "list", ArgValue, `[]`}, "at least one"},
		{KindCreateKey, "n", []string{ArgType, "zset", ArgValue, `{"a": "x"}`}, "member → score"},
		{KindCreateKey, "n", []string{ArgType, "string", ArgValue, "v", ArgTTL, "forever"}, "ttl"},
		{KindRenameKey, "l", []string{ArgTarget, "l"}, "own name"},
		{KindRenameKey, "gone", []string{ArgTarget, "n"}, "does not exist"},
		{KindPersist, "s", []string{ArgTTL, "1m"}, "unknown argument"},
	} {
		_, err := f.r.Preview(f.ctx, admin, f.conn, x.kind, f.req(0, x.key, x.args...))
		if err == nil || !strings.Contains(err.Error(), x.want) {
			t.Errorf("%s %s %v: %v, want %q", x.kind, x.key, x.args, err, x.want)
		}
	}
	for _, who := range []Actor{support, viewer} {
		_, err := f.r.Preview(f.ctx, who, f.conn, KindSetHashField, f.req(0, "h", ArgField, "f", ArgValue, "2"))
		wantErr(t, err, ErrForbidden, "admin")
	}
}

// Previewing a part of a sensitive key answers the same whether or not a
// guess of its value, score or membership is right: no no-op refusal, no
// size that tells a present member from an absent one.
func TestEditSensitivePartsNoOracle(t *testing.T) {
	f := setup(t, Options{})
	p, err := schema.BuiltinPack("eisland").With(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range p.Families {
		fam.Sensitive = true
	}
	f.conn.ForcePack(p)
	bucket := "verify:slider:rate:create:ip:MTI3LjAuMC4x"
	zset := "auth:limit:login:failures:alice"
	set := "verify:slider:account:challenges:YWxpY2U="
	f.db(4).HSet(f.ctx, bucket, "tokens", "3", "ts", "1700000000000")
	f.db(6).ZAdd(f.ctx, zset, redis.Z{Member: "m", Score: 5})
	f.db(4).SAdd(f.ctx, set, "c1")
	for _, c := range []struct {
		kind, key    string
		db           int
		right, wrong []string
	}{
		{KindSetHashField, bucket, 4, []string{ArgField, "tokens", ArgValue, "3"}, []string{ArgField, "tokens", ArgValue, "4"}},
		{KindAddZSetMember, zset, 6, []string{ArgMember, "m", ArgScore, "5"}, []string{ArgMember, "m", ArgScore, "6"}},
		{KindAddZSetMember, zset, 6, []string{ArgMember, "m", ArgScore, "5"}, []string{ArgMember, "n", ArgScore, "5"}},
		{KindAddSetMember, set, 4, []string{ArgMember, "c1"}, []string{ArgMember, "c2"}},
	} {
		right, err := f.r.Preview(f.ctx, admin, f.conn, c.kind, f.req(c.db, c.key, c.right...))
		if err != nil {
			t.Fatalf("%s with the value it holds: %v", c.kind, err)
		}
		wrong, err := f.r.Preview(f.ctx, admin, f.conn, c.kind, f.req(c.db, c.key, c.wrong...))
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if right.Summary != wrong.Summary || right.Changes[0].Text != wrong.Changes[0].Text || right.Changes[0].After != wrong.Changes[0].After {
			t.Errorf("%s answers a right guess otherwise:\n%q %q\n%q %q", c.kind, right.Changes[0].Text, right.Changes[0].After, wrong.Changes[0].Text, wrong.Changes[0].After)
		}
	}
}
