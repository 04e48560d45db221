package action

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Every edit that may create or change a key of a family the pack knows
// keeps the family's type and shape: not only create-key and set-string,
// but a field, member, element or entry added to an absent key, a token
// bucket begun with one field, and a rename onto a family's name.
func TestEditPackShapeEveryPath(t *testing.T) {
	f := setup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("eisland"))
	counter := "verify:attempts:LOGIN:a@b.c"              // counter, string
	bucket := "verify:slider:rate:create:ip:MTAuMC4wLjE=" // token bucket, hash
	f.db(2).Set(f.ctx, "plain", "hello", 0)
	f.db(4).Set(f.ctx, "plain", "hello", 0)
	f.db(2).Set(f.ctx, "verify:attempts:LOGIN:z@b.c", "4", 0)
	for _, c := range []struct {
		kind, key string
		db        int
		args      []string
		want      string
	}{
		{KindSetHashField, counter, 2, []string{ArgField, "f", ArgValue, "v"}, "not hash"},
		{KindPushList, counter, 2, []string{ArgSide, "left", ArgValue, "v"}, "not list"},
		{KindAddSetMember, counter, 2, []string{ArgMember, "m"}, "not set"},
		{KindAddZSetMember, counter, 2, []string{ArgMember, "m", ArgScore, "1"}, "not zset"},
		{KindAddStreamEntry, counter, 2, []string{ArgFields, `{"a": "1"}`}, "not stream"},
		{KindSetHashField, bucket, 4, []string{ArgField, "tokens", ArgValue, "3"}, "created whole"},
		{KindRenameKey, "plain", 4, []string{ArgTarget, bucket}, "not string"},
		{KindRenameKey, "plain", 2, []string{ArgTarget, "verify:attempts:LOGIN:y@b.c"}, "same family"},
		{KindRenameKey, "plain", 2, []string{ArgTarget, "verify:attempts:LOGIN:z@b.c", ArgReplace, "true"}, "same family"},
		{KindAddSetMember, "user:ban:set", 9, []string{ArgMember, "mallory"}, KindBan},
	} {
		_, err := f.r.Preview(f.ctx, admin, f.conn, c.kind, f.req(c.db, c.key, c.args...))
		if err == nil {
			t.Errorf("%s %s %v: accepted, want %q", c.kind, c.key, c.args, c.want)
			continue
		}
		wantErr(t, err, ErrInvalid, c.want)
	}
	// Within its family a counter may be renamed; a plain key may take a
	// plain name.
	f.mustRun(admin, KindRenameKey, f.req(2, "verify:attempts:LOGIN:z@b.c", ArgTarget, "verify:attempts:LOGIN:w@b.c"))
	f.mustRun(admin, KindRenameKey, f.req(2, "plain", ArgTarget, "plain2"))
}

// An explicit stream id at or below the last is refused at the preview,
// saying why; one above it, or an id whose sequence Redis picks at the
// last's time, is taken.
func TestEditStreamIDAboveLast(t *testing.T) {
	f := setup(t, Options{})
	f.db(0).XAdd(f.ctx, &redis.XAddArgs{Stream: "x", ID: "100-5", Values: []any{"a", "1"}})
	for _, id := range []string{"100-5", "100-4", "99-9", "99", "99-*"} {
		_, err := f.r.Preview(f.ctx, admin, f.conn, KindAddStreamEntry, f.req(0, "x", ArgFields, `{"b": "2"}`, ArgEntryID, id))
		wantErr(t, err, ErrInvalid, "not above the stream's last (100-5)")
	}
	for _, id := range []string{"100-6", "100-*", "101"} {
		f.mustRun(admin, KindAddStreamEntry, f.req(0, "x", ArgFields, `{"b": "2"}`, ArgEntryID, id))
	}
}
