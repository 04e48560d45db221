package action

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
)

// Every edit is undone exactly where the prior is read element-wise: on
// an ACL user without DUMP/RESTORE and on the embedded demo, as on Redis.
func TestEditsUndoneOnEveryPath(t *testing.T) {
	f := setup(t, Options{})
	if err := f.db(0).Do(f.ctx, "acl", "setuser", "nodump", "on", ">pw", "~*", "&*", "+@all", "-dump", "-restore").Err(); err != nil {
		t.Fatal(err)
	}
	d, err := demo.Start(f.ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	demoURL := d.Connections()[0].URL + "/13"
	demoOpts, _ := redis.ParseURL(demoURL)
	demoOpts.DisableIdentity = true
	for _, path := range []struct {
		name, url string
		data      *redis.Client
		db        int
	}{
		{"dump", f.target.URL(0), f.db(0), 0},
		{"acl-without-dump", fmt.Sprintf("redis://nodump:pw@%s/0", f.target.Addr), f.db(0), 0},
		{"embedded-demo", demoURL, redis.NewClient(demoOpts), 13},
	} {
		t.Run(path.name, func(t *testing.T) {
			f.conn = f.open(path.url)
			c := path.data
			p := "e:" + path.name + ":"
			steps := []struct {
				kind, key string
				args      []string
			}{
				{KindCreateKey, p + "h", []string{ArgType, "hash", ArgValue, `{"a": "1"}`, ArgTTL, "1h"}},
				{KindCreateKey, p + "s", []string{ArgType, "string", ArgValue, "v", ArgTTL, "1h"}},
				{KindSetHashField, p + "h", []string{ArgField, "a", ArgValue, "2"}},
				{KindSetString, p + "s", []string{ArgValue, "w"}},
				{KindPushList, p + "l", []string{ArgSide, "left", ArgValue, "x"}},
				{KindRenameKey, p + "h", []string{ArgTarget, p + "h2"}},
				{KindRenameKey, p + "s", []string{ArgTarget, p + "h2", ArgReplace, "true"}},
				{KindPersist, p + "h2", nil},
				{KindSetListElement, p + "l", []string{ArgIndex, "0", ArgValue, "y"}},
				{KindAddSetMember, p + "set", []string{ArgMember, "m"}},
				{KindAddZSetMember, p + "z", []string{ArgMember, "m", ArgScore, "2.5"}},
				{KindCreateKey, p + "x", []string{ArgType, "stream", ArgValue, `{"a": "1"}`}},
				{KindAddStreamEntry, p + "x", []string{ArgFields, `{"b": "2"}`}},
			}
			for _, s := range steps {
				if path.name == "acl-without-dump" && s.key == p+"x" {
					// A stream has no element-wise reading (Snapshot): where
					// DUMP is refused, writing one is refused up front, not
					// aborted at EXEC.
					_, err := f.r.Preview(f.ctx, admin, f.conn, s.kind, f.req(path.db, s.key, s.args...))
					wantErr(t, err, ErrInvalid, "refuses DUMP")
					if c.Exists(f.ctx, s.key).Val() != 0 {
						t.Fatalf("%s wrote the stream", s.kind)
					}
					continue
				}
				if path.name != "dump" && s.key == p+"x" {
					// On the demo, DUMP is not Redis's format: a stream
					// created there cannot be undone (the preview says so).
					continue
				}
				before := map[string]string{}
				for _, k := range []string{p + "h", p + "s", p + "l", p + "h2", p + "set", p + "z", p + "x"} {
					before[k] = contentOf(t, c, k) + fmt.Sprint(c.PTTL(f.ctx, k).Val() > 0)
				}
				f.mustRun(admin, s.kind, f.req(path.db, s.key, s.args...))
				rec := f.last()
				f.mustRun(admin, KindUndo, UndoRequest(rec))
				for k, want := range before {
					if got := contentOf(t, c, k) + fmt.Sprint(c.PTTL(f.ctx, k).Val() > 0); got != want {
						t.Fatalf("%s %s: undo left %s as %s, want %s", s.kind, s.key, k, got, want)
					}
				}
				f.mustRun(admin, s.kind, f.req(path.db, s.key, s.args...)) // again, to build on
			}
		})
	}
}
