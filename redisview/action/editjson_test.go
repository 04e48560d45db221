package action

import (
	"reflect"
	"testing"

	"github.com/redis/go-redis/v9"
)

// JSON-carried values are written byte-exact: text that is not UTF-8 (or
// a lone surrogate escape), which encoding/json would turn into U+FFFD, is
// refused; bytes are written as {"b64": "…"} in any form of base64, names
// included (an array of pairs); empty strings are data like any other;
// nothing may follow the value.
func TestCreateKeyJSONBytesExact(t *testing.T) {
	f := setup(t, Options{})
	c := f.db(0)
	for _, bad := range []struct{ kind, typ, value, want string }{
		{KindCreateKey, "hash", "{\"a\xff\": \"v\xfe\"}", "not valid UTF-8"},
		{KindCreateKey, "list", "[\"e\xff\"]", "not valid UTF-8"},
		{KindCreateKey, "zset", "{\"m\xff\": 1}", "not valid UTF-8"},
		{KindCreateKey, "stream", "{\"a\xff\": \"v\"}", "not valid UTF-8"},
		{KindCreateKey, "set", `["\udcff"]`, "element 1"},
		{KindCreateKey, "zset", `{"a": 1} junk`, "more after"},
		{KindCreateKey, "list", `["a"] ["b"]`, "more after"},
		{KindCreateKey, "hash", `[[{"b64": "not base64!"}, "v"]]`, "entry 1"},
		{KindCreateKey, "hash", `[[{"b64": "/w==", "x": 1}, "v"]]`, "entry 1"},
		{KindAddStreamEntry, "", "{\"b\xff\": \"x\"}", "not valid UTF-8"},
	} {
		req := f.req(0, "j:bad", ArgType, bad.typ, ArgValue, bad.value)
		if bad.kind == KindAddStreamEntry {
			req = f.req(0, "j:bad", ArgFields, bad.value)
		}
		_, err := f.r.Preview(f.ctx, admin, f.conn, bad.kind, req)
		wantErr(t, err, ErrInvalid, bad.want)
	}
	f.mustRun(admin, KindCreateKey, f.req(0, "j:hash", ArgType, "hash", ArgValue, `[[{"b64": "/w=="}, {"b64": "_-4"}], ["", ""], ["t", "x"]]`))
	if got := c.HGetAll(f.ctx, "j:hash").Val(); !reflect.DeepEqual(got, map[string]string{"\xff": "\xff\xee", "": "", "t": "x"}) {
		t.Errorf("hash %q", got)
	}
	f.mustRun(admin, KindCreateKey, f.req(0, "j:list", ArgType, "list", ArgValue, `["a", {"b64": "/w"}, ""]`))
	if got := c.LRange(f.ctx, "j:list", 0, -1).Val(); !reflect.DeepEqual(got, []string{"a", "\xff", ""}) {
		t.Errorf("list %q", got)
	}
	f.mustRun(admin, KindCreateKey, f.req(0, "j:set", ArgType, "set", ArgValue, `[{"b64": "/+4="}]`))
	if got := c.SMembers(f.ctx, "j:set").Val(); !reflect.DeepEqual(got, []string{"\xff\xee"}) {
		t.Errorf("set %q", got)
	}
	f.mustRun(admin, KindCreateKey, f.req(0, "j:zset", ArgType, "zset", ArgValue, `[[{"b64": "/w=="}, 1.5], ["b", 2]]`))
	if got := c.ZRangeWithScores(f.ctx, "j:zset", 0, -1).Val(); !reflect.DeepEqual(got, []redis.Z{{Score: 1.5, Member: "\xff"}, {Score: 2, Member: "b"}}) {
		t.Errorf("zset %v", got)
	}
	// An empty field or member is data as Redis takes it.
	f.mustRun(admin, KindSetHashField, f.req(0, "j:hash", ArgField, "", ArgValue, "e"))
	f.mustRun(admin, KindAddSetMember, f.req(0, "j:set", ArgMember, ""))
	if c.HGet(f.ctx, "j:hash", "").Val() != "e" || !c.SIsMember(f.ctx, "j:set", "").Val() {
		t.Error("an empty field or member was not written")
	}
	f.mustRun(admin, KindCreateKey, f.req(0, "j:stream", ArgType, "stream", ArgValue, `[[{"b64": "/w=="}, {"b64": "/g=="}]]`))
	f.mustRun(admin, KindAddStreamEntry, f.req(0, "j:stream", ArgFields, `{"k": {"b64": "/Q"}}`))
	xs := c.XRange(f.ctx, "j:stream", "-", "+").Val()
	if len(xs) != 2 || !reflect.DeepEqual(xs[0].Values, map[string]any{"\xff": "\xfe"}) || !reflect.DeepEqual(xs[1].Values, map[string]any{"k": "\xfd"}) {
		t.Errorf("stream %v", xs)
	}
}
