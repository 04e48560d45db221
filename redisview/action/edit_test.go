package action

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// contentOf is a key's value element for element, and whether it has a
// TTL: what an edit changes and its undo must put back exactly (a DUMP
// may differ in encoding: SREM does not turn a set back into an intset).
func contentOf(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	ctx := t.Context()
	typ := c.Type(ctx, key).Val()
	var v any
	switch typ {
	case "none":
		return "absent"
	case "string":
		v = c.Get(ctx, key).Val()
	case "hash":
		v = c.HGetAll(ctx, key).Val() // fmt sorts map keys
	case "list":
		v = c.LRange(ctx, key, 0, -1).Val()
	case "set":
		m := c.SMembers(ctx, key).Val()
		slices.Sort(m)
		v = m
	case "zset":
		v = c.ZRangeWithScores(ctx, key, 0, -1).Val()
	case "stream":
		v = c.XRange(ctx, key, "-", "+").Val()
	}
	return fmt.Sprintf("%s %q", typ, fmt.Sprint(v))
}

func pttlOf(t *testing.T, c *redis.Client, key string) time.Duration {
	t.Helper()
	return c.PTTL(t.Context(), key).Val()
}

func seedEdit(t *testing.T, c *redis.Client, key, typ string) {
	t.Helper()
	ctx := t.Context()
	var err error
	switch typ {
	case "string":
		err = c.Set(ctx, key, "old\x00\xff", 0).Err()
	case "hash":
		err = c.HSet(ctx, key, "f", "1", "f\u200b", "2", "g", "3").Err()
	case "list":
		err = c.RPush(ctx, key, "x", "y", "z").Err()
	case "set":
		err = c.SAdd(ctx, key, "m", "m\u200b", "n").Err()
	case "zset":
		err = c.ZAdd(ctx, key, redis.Z{Member: "ann", Score: 1}, redis.Z{Member: "ann ", Score: 2}).Err()
	case "stream":
		err = c.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: "5-1", Values: []any{"a", "1"}}).Err()
	}
	if err == nil {
		err = c.PExpire(ctx, key, 7*time.Minute).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Every edit, on a key with a TTL: it writes what it says, keeps the TTL,
// and its undo puts the value and the TTL back exactly.
func TestEditsAndTheirUndoPerType(t *testing.T) {
	f := setup(t, Options{})
	c := f.db(3)
	cases := []struct {
		typ, kind string
		args      []string
		want      func(key string) bool
	}{
		{"string", KindSetString, []string{ArgValue, "new \u200b"}, func(k string) bool { return c.Get(f.ctx, k).Val() == "new \u200b" }},
		{"string", KindSetString, []string{ArgValue, "00ff 6e", ArgEncoding, EncodingHex}, func(k string) bool { return c.Get(f.ctx, k).Val() == "\x00\xffn" }},
		{"hash", KindSetHashField, []string{ArgField, "f\u200b", ArgValue, "changed"}, func(k string) bool {
			return c.HGet(f.ctx, k, "f\u200b").Val() == "changed" && c.HGet(f.ctx, k, "f").Val() == "1"
		}},
		{"hash", KindSetHashField, []string{ArgField, "f ", ArgValue, "new"}, func(k string) bool { return c.HLen(f.ctx, k).Val() == 4 }},
		{"list", KindSetListElement, []string{ArgIndex, "-1", ArgValue, "Z"}, func(k string) bool { return c.LIndex(f.ctx, k, 2).Val() == "Z" }},
		{"list", KindPushList, []string{ArgSide, "left", ArgValue, " x"}, func(k string) bool { return c.LIndex(f.ctx, k, 0).Val() == " x" }},
		{"list", KindPushList, []string{ArgSide, "right", ArgValue, "w"}, func(k string) bool { return c.LIndex(f.ctx, k, -1).Val() == "w" }},
		{"set", KindAddSetMember, []string{ArgMember, "m "}, func(k string) bool { return c.SCard(f.ctx, k).Val() == 4 }},
		{"zset", KindAddZSetMember, []string{ArgMember, "ann", ArgScore, "9.5"}, func(k string) bool {
			return c.ZScore(f.ctx, k, "ann").Val() == 9.5 && c.ZScore(f.ctx, k, "ann ").Val() == 2
		}},
		{"zset", KindAddZSetMember, []string{ArgMember, "bob", ArgScore, "-3"}, func(k string) bool { return c.ZCard(f.ctx, k).Val() == 3 }},
		{"stream", KindAddStreamEntry, []string{ArgFields, `{"b": "2", "a": "1"}`}, func(k string) bool { return c.XLen(f.ctx, k).Val() == 2 }},
		{"stream", KindAddStreamEntry, []string{ArgFields, `{"z": ""}`, ArgEntryID, "9-0"}, func(k string) bool {
			return c.XRange(f.ctx, k, "9-0", "9-0").Val()[0].Values["z"] == ""
		}},
		{"hash", KindPersist, nil, func(k string) bool { return pttlOf(t, c, k) == -1 }},
	}
	for i, tc := range cases {
		key := fmt.Sprintf("edit:%d:%s", i, tc.kind)
		seedEdit(t, c, key, tc.typ)
		before, ttl := contentOf(t, c, key), pttlOf(t, c, key)
		f.mustRun(admin, tc.kind, f.req(3, key, tc.args...))
		if !tc.want(key) {
			t.Fatalf("%s %v: wrote %s", tc.kind, tc.args, contentOf(t, c, key))
		}
		if now := pttlOf(t, c, key); tc.kind != KindPersist && (now <= 0 || (ttl-now).Abs() > 3*time.Second) {
			t.Fatalf("%s: TTL %v after the edit, %v before", tc.kind, now, ttl)
		}
		f.mustRun(admin, KindUndo, UndoRequest(f.last()))
		if got := contentOf(t, c, key); got != before {
			t.Fatalf("%s %v: undo left %s, want %s", tc.kind, tc.args, got, before)
		}
		if now := pttlOf(t, c, key); now <= 0 || (ttl-now).Abs() > 3*time.Second {
			t.Fatalf("%s: TTL %v after undo, %v before", tc.kind, now, ttl)
		}
	}
}

// A list edit's preview shows the element it replaces.
func TestSetListElementShowsTheOldElement(t *testing.T) {
	f := setup(t, Options{})
	seedEdit(t, f.db(0), "l", "list")
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindSetListElement, f.req(0, "l", ArgIndex, "1", ArgValue, "Y"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `to 1 bytes: "Y" (before: 1 bytes: "y"; list, 3 items`; !strings.Contains(pv.Summary, want) {
		t.Fatalf("summary %q, want %q", pv.Summary, want)
	}
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindSetListElement, f.req(0, "l", ArgIndex, "-1", ArgValue, "z"))
	wantErr(t, err, ErrInvalid, "already holds")
}

// A key of every type is created with its TTL, next to its twin, which is
// left alone; undo removes the created key only.
func TestCreateKeyEveryTypeAndUndo(t *testing.T) {
	f := setup(t, Options{})
	c := f.db(2)
	values := map[string]string{
		"string": "v\x00",
		"hash":   `{"tokens": "1", "f\u200b": ""}`,
		"list":   `["a", "a", " b"]`,
		"set":    `["a", "a\u200b"]`,
		"zset":   `{"ann": 1.5, "bob": -2}`,
		"stream": `{"event": "login"}`,
	}
	want := map[string]string{
		"string": `string "v\x00"`,
		"hash":   `hash "map[f\u200b: tokens:1]"`,
		"list":   `list "[a a  b]"`,
		"set":    `set "[a a\u200b]"`,
		"zset":   `zset "[{-2 bob} {1.5 ann}]"`,
	}
	for _, typ := range CreateTypes {
		twin := "new:" + typ
		key := twin + "\u200b"
		c.Set(f.ctx, twin, "twin", 0)
		f.mustRun(admin, KindCreateKey, f.req(2, key, ArgType, typ, ArgValue, values[typ], ArgTTL, "10m"))
		got := contentOf(t, c, key)
		if w, ok := want[typ]; (ok && got != w) || !strings.HasPrefix(got, typ) {
			t.Fatalf("created %s, want %s", got, want[typ])
		}
		if ttl := pttlOf(t, c, key); ttl <= 9*time.Minute || ttl > 10*time.Minute {
			t.Fatalf("%s: TTL %v", typ, ttl)
		}
		f.mustRun(admin, KindUndo, UndoRequest(f.last()))
		if got := contentOf(t, c, key); got != "absent" {
			t.Fatalf("undo of create %s left %s", typ, got)
		}
		if c.Get(f.ctx, twin).Val() != "twin" {
			t.Fatalf("the twin %q was touched", twin)
		}
	}
	// A key that exists is not created over.
	_, err := f.r.Preview(f.ctx, admin, f.conn, KindCreateKey, f.req(2, "new:string", ArgType, "string", ArgValue, "x"))
	wantErr(t, err, ErrInvalid, "exists")
}

// Rename refuses an existing target unless replace is asked; then the
// preview says so, and undo puts both keys back with their TTLs.
func TestRenameReplaceAndUndo(t *testing.T) {
	f := setup(t, Options{})
	c := f.db(1)
	c.Set(f.ctx, "a", "A", time.Hour)
	c.Set(f.ctx, "a\u200b", "twin", 0)
	c.RPush(f.ctx, "b", "B1", "B2")

	_, err := f.r.Preview(f.ctx, admin, f.conn, KindRenameKey, f.req(1, "a", ArgTarget, "a\u200b"))
	wantErr(t, err, ErrInvalid, "exists")
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindRenameKey, f.req(1, "a", ArgTarget, "a\u200b", ArgReplace, "true"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Changes) != 2 || !strings.Contains(pv.Changes[1].Text, "OVERWRITE") || !strings.Contains(pv.Summary, "string, 4 bytes") {
		t.Fatalf("preview does not say the target is overwritten: %+v", pv.Changes)
	}
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if c.Exists(f.ctx, "a").Val() != 0 || c.Get(f.ctx, "a\u200b").Val() != "A" || pttlOf(t, c, "a\u200b") <= 0 {
		t.Fatal("rename did not move the value and its TTL")
	}
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	if c.Get(f.ctx, "a").Val() != "A" || pttlOf(t, c, "a") <= 59*time.Minute || c.Get(f.ctx, "a\u200b").Val() != "twin" || pttlOf(t, c, "a\u200b") != -1 {
		t.Fatalf("undo of rename: a=%s a\u200b=%s", contentOf(t, c, "a"), contentOf(t, c, "a\u200b"))
	}
	// To a new name: undo removes the new name.
	f.mustRun(admin, KindRenameKey, f.req(1, "b", ArgTarget, "b "))
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	if contentOf(t, c, "b") != `list "[B1 B2]"` || c.Exists(f.ctx, "b ").Val() != 0 {
		t.Fatal("undo of a rename to a new name")
	}
	// Keydeck's own keys are never a target.
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindRenameKey, f.req(1, "b", ArgTarget, "keydeck:x"))
	wantErr(t, err, ErrForbidden, "")
}
