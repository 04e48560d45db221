package console_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/console"
)

// table reads the command table of the redis-server under test, over
// protocol proto.
func table(t *testing.T, rs *redistest.Server, proto int) (*redis.Client, *console.Table) {
	t.Helper()
	cl := redis.NewClient(&redis.Options{Addr: rs.Addr, Protocol: proto})
	t.Cleanup(func() { _ = cl.Close() })
	tab, err := (&console.Tables{}).Get(context.Background(), "test", cl)
	if err != nil {
		t.Fatal(err)
	}
	return cl, tab
}

// The classes come from the table the server under test answers, over
// RESP2 and RESP3 alike.
func TestClassifyFromServerTable(t *testing.T) {
	rs := redistest.Start(t)
	for _, proto := range []int{2, 3} {
		_, tab := table(t, rs, proto)
		tests := []struct {
			line string
			want console.Class
		}{
			{"GET k", console.Read},
			{"MGET a b", console.Read},
			{"PFCOUNT h", console.Read}, // may_replicate, but readonly
			{"PING", console.Read},
			{"XREAD STREAMS s 0", console.Read},
			{"XREAD BLOCK 0 STREAMS s 0", console.Blocking},
			{"SET k v", console.Write},
			{"DEL k", console.Write},
			{"FLUSHALL", console.Dangerous},
			{"KEYS *", console.Dangerous},
			{"CONFIG SET maxmemory 1", console.Dangerous},
			{"INFO", console.Dangerous},
			{"BLPOP l 0", console.Blocking},
			{"SUBSCRIBE ch", console.Blocking},
			{"MONITOR", console.Blocking},
			{"SELECT 1", console.ConnState},
			{"CLIENT SETNAME x", console.ConnState},
			{"MULTI", console.ConnState},
			{"PUBLISH ch m", console.ServerWrite},
		}
		for _, tt := range tests {
			args, _ := console.Split(tt.line)
			c := tab.Lookup(args)
			if c == nil {
				t.Fatalf("RESP%d: %s not in the table", proto, tt.line)
			}
			if got := console.Classify(c, args); got != tt.want {
				t.Errorf("RESP%d: %s is %s, want %s (flags %v, acl %v)", proto, tt.line, got, tt.want, c.Flags, c.ACL)
			}
		}
		get := tab.Commands["get"]
		if get.Arity != 2 || get.First != 1 || len(get.KeySpecs) != 1 || get.KeySpecs[0].Search != "index" || get.KeySpecs[0].Index != 1 {
			t.Errorf("RESP%d: get = %+v", proto, get)
		}
		if c := tab.Lookup([]string{"config", "get", "x"}); c == nil || c.Name != "config|get" || c.Arity != -3 {
			t.Errorf("RESP%d: CONFIG GET = %+v", proto, c)
		}
	}
}

func sensitiveTOTP(_ int, key string) bool { return strings.HasPrefix(key, "totp:") }

// decide judges a line as level would, on rs's database 0.
func decide(t *testing.T, cl *redis.Client, tab *console.Table, level action.Level, line string, mut ...func(*console.Request)) (console.Decision, error) {
	t.Helper()
	args, err := console.Split(line)
	if err != nil {
		t.Fatal(err)
	}
	req := console.Request{Args: args, Level: level, Sensitive: sensitiveTOTP, Protected: func(k string) bool { return strings.HasPrefix(k, "keydeck:") }}
	for _, m := range mut {
		m(&req)
	}
	return console.Decide(context.Background(), cl, tab, req)
}

func TestDecideRoles(t *testing.T) {
	rs := redistest.Start(t)
	cl, tab := table(t, rs, 3)
	ctx := context.Background()
	members := make([]any, 1001)
	for i := range members {
		members[i] = fmt.Sprint(i)
	}
	cl.SAdd(ctx, "big", members...)
	cl.SAdd(ctx, "small", "a", "b")
	cl.Set(ctx, "plain", "v", 0)
	cl.Set(ctx, "totp:secret:ada", "s3cret", 0)
	dangerous := func(r *console.Request) { r.AllowDangerous = true }
	readOnly := func(r *console.Request) { r.ReadOnly = true }
	tests := []struct {
		level action.Level
		line  string
		mut   []func(*console.Request)
		// want: "" runs (or previews, for a write); else the sentinel and
		// the page the refusal links.
		want     error
		page     console.Page
		wantKeys []string
	}{
		{action.Viewer, "GET plain", nil, nil, 0, []string{"plain"}},
		{action.Support, "SMEMBERS small", nil, nil, 0, []string{"small"}},
		{action.Viewer, "SMEMBERS big", nil, action.ErrForbidden, console.KeyPage, nil},
		{action.Admin, "SUNION small big", nil, action.ErrForbidden, console.KeyPage, nil},
		{action.Viewer, "SCARD big", nil, nil, 0, []string{"big"}}, // @fast: not measured
		{action.Viewer, "SSCAN big 0 COUNT 1000", nil, nil, 0, []string{"big"}},
		{action.Viewer, "SCAN 0 COUNT 5000", nil, action.ErrForbidden, console.KeyBrowser, nil},
		{action.Viewer, "KEYS *", nil, action.ErrForbidden, console.KeyBrowser, nil},
		{action.Admin, "KEYS *", []func(*console.Request){dangerous}, action.ErrForbidden, console.KeyBrowser, nil},
		{action.Viewer, "GET totp:secret:ada", nil, action.ErrForbidden, 0, nil},
		{action.Admin, "GET totp:secret:ada", nil, action.ErrForbidden, 0, nil},
		{action.Viewer, "MGET plain totp:secret:ada small", nil, action.ErrForbidden, 0, nil},
		{action.Viewer, "GET keydeck:secret", nil, action.ErrForbidden, 0, nil},
		{action.Viewer, "DEL plain", nil, action.ErrForbidden, 0, nil},
		{action.Support, "SET plain x", nil, action.ErrForbidden, 0, nil},
		{action.Admin, "SET plain x", nil, nil, 0, []string{"plain"}},
		{action.Admin, "MSET a 1 b 2 a 3", nil, nil, 0, []string{"a", "b"}},
		{action.Admin, "SET totp:secret:ada new", nil, nil, 0, []string{"totp:secret:ada"}},
		{action.Admin, "COPY totp:secret:ada plain2", nil, action.ErrForbidden, 0, nil},
		{action.Admin, "DEL plain totp:secret:ada", nil, action.ErrForbidden, 0, nil},
		{action.Admin, "SET plain x", []func(*console.Request){readOnly}, action.ErrForbidden, 0, nil},
		{action.Admin, "FLUSHALL", nil, action.ErrForbidden, 0, nil},
		{action.Admin, "FLUSHALL", []func(*console.Request){dangerous}, nil, 0, nil},
		{action.Admin, "FLUSHDB", []func(*console.Request){dangerous}, nil, 0, nil},
		{action.Support, "FLUSHALL", []func(*console.Request){dangerous}, action.ErrForbidden, 0, nil},
		{action.Admin, "FLUSHALL", []func(*console.Request){dangerous, readOnly}, action.ErrForbidden, 0, nil},
		{action.Admin, "ACL SETUSER x on >pw", []func(*console.Request){dangerous}, action.ErrForbidden, 0, nil},
		{action.Admin, "MIGRATE 127.0.0.1 1 \"\" 0 100 AUTH pw KEYS a", []func(*console.Request){dangerous}, action.ErrForbidden, 0, nil},
		{action.Admin, "RESTORE k 0 x", []func(*console.Request){dangerous}, action.ErrForbidden, 0, nil},
		{action.Admin, "CLIENT KILL ID 1", []func(*console.Request){dangerous}, action.ErrForbidden, console.ClientsPage, nil},
		{action.Viewer, "INFO", nil, action.ErrForbidden, console.ServerPage, nil},
		{action.Viewer, "CLIENT LIST", nil, action.ErrForbidden, console.ClientsPage, nil},
		{action.Admin, "CONFIG SET maxmemory 1", []func(*console.Request){dangerous}, action.ErrForbidden, console.ServerPage, nil},
		{action.Viewer, "SUBSCRIBE ch", nil, action.ErrInvalid, console.PubSubPage, nil},
		{action.Admin, "PUBLISH ch m", nil, action.ErrForbidden, console.PubSubPage, nil},
		{action.Viewer, "BLPOP l 0", nil, action.ErrInvalid, 0, nil},
		{action.Viewer, "SELECT 2", nil, action.ErrInvalid, 0, nil},
		{action.Viewer, "SORT_RO small BY nosort GET totp:*", nil, action.ErrForbidden, 0, nil},
		{action.Viewer, "NOSUCHCOMMAND x", nil, action.ErrInvalid, 0, nil},
	}
	for _, tt := range tests {
		d, err := decide(t, cl, tab, tt.level, tt.line, tt.mut...)
		if tt.want == nil {
			if err != nil || !reflect.DeepEqual(d.Keys, tt.wantKeys) {
				t.Errorf("%s %s: keys %q, %v; want %q and no refusal", tt.level, tt.line, d.Keys, err, tt.wantKeys)
			}
			continue
		}
		var r *console.Refused
		if !errors.As(err, &r) || !errors.Is(err, tt.want) || r.Page != tt.page {
			t.Errorf("%s %s: %v (%T); want %v linking page %d", tt.level, tt.line, err, err, tt.want, tt.page)
		}
	}
	// The refusal names the key over the bound, for its link.
	_, err := decide(t, cl, tab, action.Viewer, "SUNION small big")
	var r *console.Refused
	if !errors.As(err, &r) || r.Key != "big" || !strings.Contains(err.Error(), "1001 members") {
		t.Errorf("SUNION small big: %v", err)
	}
	// A wrong number of arguments is the server's own answer.
	_, err = decide(t, cl, tab, action.Viewer, "GET")
	var re redis.Error
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "wrong number of arguments") {
		t.Errorf("GET alone: %v", err)
	}
}

// Movable keys come from COMMAND GETKEYS, not from fixed positions.
func TestKeysMovable(t *testing.T) {
	rs := redistest.Start(t)
	cl, tab := table(t, rs, 2)
	for line, want := range map[string][]string{
		"ZUNION 2 a b WITHSCORES":       {"a", "b"},
		"XREAD COUNT 2 STREAMS s t 0 0": {"s", "t"},
		"MGET x y z":                    {"x", "y", "z"},
		"PING":                          nil,
		"CONFIG GET maxmemory":          nil,
	} {
		args, _ := console.Split(line)
		got, err := console.Keys(context.Background(), cl, tab.Lookup(args), args)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Keys(%s) = %q, %v; want %q", line, got, err, want)
		}
	}
}

// A server that refuses COMMAND (ACL) gives no table: the console runs
// nothing rather than guess.
func TestTablesNeedCommand(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := rs.Client(0).Do(ctx, "ACL", "SETUSER", "nocmd", "on", ">pw", "~*", "+@all", "-command").Err(); err != nil {
		t.Fatal(err)
	}
	cl := redis.NewClient(&redis.Options{Addr: rs.Addr, Username: "nocmd", Password: "pw"})
	defer cl.Close()
	if _, err := (&console.Tables{}).Get(ctx, "acl", cl); !errors.Is(err, console.ErrNoCommandTable) {
		t.Fatalf("Get = %v, want ErrNoCommandTable", err)
	}
}

// A table is kept while the server's run_id stays and for at most an hour.
func TestTablesRefresh(t *testing.T) {
	rs := redistest.Start(t)
	now := time.Unix(1_700_000_000, 0)
	ts := &console.Tables{Now: func() time.Time { return now }}
	cl := rs.Client(0)
	a, err := ts.Get(context.Background(), "s", cl)
	if err != nil || a.RunID == "" {
		t.Fatalf("%v, run_id %q", err, a.RunID)
	}
	if b, _ := ts.Get(context.Background(), "s", cl); b != a {
		t.Fatal("read again within the hour")
	}
	now = now.Add(61 * time.Minute)
	if b, _ := ts.Get(context.Background(), "s", cl); b == a {
		t.Fatal("not read again after an hour")
	}
}
