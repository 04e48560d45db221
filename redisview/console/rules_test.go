package console_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/console"
)

// verdict is a line's expected judgement: ok (runs or previews), or
// refused with a sentinel and the page linked.
type verdict struct {
	level action.Level
	line  string
	flag  bool // --console-allow-dangerous
	want  error
	page  console.Page
	class console.Class // checked when want is nil
}

func checkVerdicts(t *testing.T, cl *redis.Client, tab *console.Table, tests []verdict) {
	t.Helper()
	for _, tt := range tests {
		d, err := decide(t, cl, tab, tt.level, tt.line, func(r *console.Request) { r.AllowDangerous = tt.flag })
		if tt.want == nil {
			if err != nil || d.Class != tt.class {
				t.Errorf("%s %s (flag %v): %s, %v; want %s and no refusal", tt.level, tt.line, tt.flag, d.Class, err, tt.class)
			}
			continue
		}
		var r *console.Refused
		if !errors.As(err, &r) || !errors.Is(err, tt.want) || r.Page != tt.page {
			t.Errorf("%s %s (flag %v): %v (%T); want %v linking page %d", tt.level, tt.line, tt.flag, err, err, tt.want, tt.page)
		}
	}
}

// A random-member count sets the reply's length whatever the key holds:
// negative (members repeated) or above the bound, it is refused to
// everyone, on a one-member key too.
func TestDecideCountBounds(t *testing.T) {
	rs := redistest.Start(t)
	cl, tab := table(t, rs, 3)
	ctx := context.Background()
	cl.SAdd(ctx, "small", "a")
	cl.HSet(ctx, "h", "f", "v")
	cl.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "m"})
	checkVerdicts(t, cl, tab, []verdict{
		{level: action.Viewer, line: "SRANDMEMBER small -200000000", want: action.ErrForbidden, page: console.KeyPage},
		{level: action.Admin, line: "SRANDMEMBER small -2", flag: true, want: action.ErrForbidden, page: console.KeyPage},
		{level: action.Viewer, line: "SRANDMEMBER small 1001", want: action.ErrForbidden, page: console.KeyPage},
		{level: action.Viewer, line: "HRANDFIELD h -5 WITHVALUES", want: action.ErrForbidden, page: console.KeyPage},
		{level: action.Support, line: "ZRANDMEMBER z 2000 WITHSCORES", want: action.ErrForbidden, page: console.KeyPage},
		{level: action.Viewer, line: "SRANDMEMBER small 1000", class: console.Read},
		{level: action.Viewer, line: "SRANDMEMBER small", class: console.Read},
		{level: action.Viewer, line: "HRANDFIELD h 3 WITHVALUES", class: console.Read},
		{level: action.Viewer, line: "ZRANDMEMBER z 0", class: console.Read},
		// Globs are bounded like the Pub/Sub page's (review C L4).
		{level: action.Viewer, line: "SCAN 0 MATCH *a*a*a*a*a*a*a*a*b COUNT 10", want: action.ErrForbidden, page: console.KeyBrowser},
		{level: action.Viewer, line: "HSCAN h 0 MATCH " + strings.Repeat("x", 300), want: action.ErrForbidden, page: console.KeyBrowser},
		{level: action.Viewer, line: "COMMAND LIST FILTERBY PATTERN *a*a*a*a*a*a*a*a*b", want: action.ErrForbidden, page: console.KeyBrowser},
		{level: action.Viewer, line: "SCAN 0 MATCH user:*:session COUNT 10", class: console.Read},
	})
	_, err := decide(t, cl, tab, action.Viewer, "SRANDMEMBER small -200000000")
	if err == nil || !strings.Contains(err.Error(), "negative count") {
		t.Errorf("the refusal says why: %v", err)
	}
}

// Scripts, functions, replication links and keyed DEBUG subcommands reach
// keys the console cannot name (Keydeck's own session secret, the audit
// log): refused to everyone, with --console-allow-dangerous too. So are
// the writes that reach another database.
func TestDecideNeverRuns(t *testing.T) {
	rs := redistest.Start(t)
	cl, tab := table(t, rs, 3)
	cl.Set(context.Background(), "plain", "v", 0)
	var tests []verdict
	for _, line := range []string{
		`EVAL "return redis.call('GET','keydeck:session-secret')" 0`,
		`EVAL "redis.call('DEL','keydeck:audit')" 0`,
		`EVAL_RO "return redis.call('GET',KEYS[1])" 1 plain`,
		"EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0",
		"EVALSHA_RO e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0",
		"FCALL f 0", "FCALL_RO f 0",
		"FUNCTION DUMP", "FUNCTION LIST", "FUNCTION FLUSH", "FUNCTION DELETE lib",
		"SCRIPT LOAD x", "SCRIPT FLUSH", "SCRIPT KILL",
		"SYNC", "PSYNC ? -1", "REPLCONF listening-port 1", "MONITOR",
		"DEBUG OBJECT plain", "DEBUG POPULATE 10", "DEBUG DIGEST-VALUE plain", "DEBUG NEWSUBCOMMAND plain",
		"MOVE plain 3", "COPY plain plain DB 3", "COPY plain other db 5 REPLACE", "SWAPDB 0 15",
		// Replication replaces every key (the audit log, the session
		// secret) with another server's; RELOAD and LOADAOF with the disk's;
		// LCS costs the product of its strings' lengths (review C).
		"REPLICAOF 127.0.0.1 1", "SLAVEOF 127.0.0.1 1", "DEBUG RELOAD NOSAVE", "DEBUG LOADAOF",
		"LCS plain plain", "LCS plain plain LEN",
	} {
		tests = append(tests,
			verdict{level: action.Admin, line: line, flag: true, want: action.ErrForbidden},
			verdict{level: action.Viewer, line: line, want: action.ErrForbidden})
	}
	tests = append(tests,
		verdict{level: action.Admin, line: "SCRIPT EXISTS abc", flag: true, class: console.Dangerous},
		verdict{level: action.Admin, line: "DEBUG SLEEP 0", flag: true, class: console.Dangerous},
		verdict{level: action.Admin, line: "COPY plain other", class: console.Write},
		verdict{level: action.Admin, line: "COPY plain db", class: console.Write}, // a key named db
	)
	checkVerdicts(t, cl, tab, tests)
	_, err := decide(t, cl, tab, action.Admin, "MOVE plain 3")
	if err == nil || !strings.Contains(err.Error(), "database selector") {
		t.Errorf("MOVE's refusal says where to do it: %v", err)
	}
}

// Without COMMAND GETKEYS (refused by the server's ACL), a command whose
// keys follow its arguments is refused instead of judged on no keys; one
// with keys at fixed positions is still judged by them.
func TestDecideGetkeysFailsClosed(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := rs.Client(0).Do(ctx, "ACL", "SETUSER", "nogetkeys", "on", ">pw", "~*", "+@all", "-command|getkeys").Err(); err != nil {
		t.Fatal(err)
	}
	cl := redis.NewClient(&redis.Options{Addr: rs.Addr, Username: "nogetkeys", Password: "pw", Protocol: 3})
	t.Cleanup(func() { _ = cl.Close() })
	tab, err := (&console.Tables{}).Get(ctx, "acl", cl)
	if err != nil {
		t.Fatal(err)
	}
	cl.ZAdd(ctx, "totp:secret:z", redis.Z{Score: 1, Member: "s3cret"})
	cl.Set(ctx, "plain", "v", 0)
	checkVerdicts(t, cl, tab, []verdict{
		{level: action.Viewer, line: "ZUNION 1 totp:secret:z", want: action.ErrForbidden},
		{level: action.Viewer, line: "SINTERCARD 1 totp:secret:z", want: action.ErrForbidden},
		{level: action.Viewer, line: "XREAD STREAMS totp:secret:s 0", want: action.ErrForbidden},
		{level: action.Admin, line: "LMPOP 1 totp:secret:l LEFT", want: action.ErrForbidden},
		{level: action.Viewer, line: "GET totp:secret:z", want: action.ErrForbidden}, // fixed position, sensitive
		{level: action.Viewer, line: "GET plain", class: console.Read},
	})
	_, err = decide(t, cl, tab, action.Viewer, "ZUNION 1 totp:secret:z")
	if err == nil || !strings.Contains(err.Error(), "GETKEYS") {
		t.Errorf("the refusal names what is missing: %v", err)
	}
}

// Reads are allow-listed: a command the table flags neither readonly nor
// write (MEMORY PURGE) is not a read; server commands that change things
// (CLIENT PAUSE, CONFIG RESETSTAT) are refused as dangerous, not as reads
// shown elsewhere, and run for admins with the flag.
func TestDecideReadsAllowListed(t *testing.T) {
	rs := redistest.Start(t)
	cl, tab := table(t, rs, 3)
	checkVerdicts(t, cl, tab, []verdict{
		{level: action.Viewer, line: "MEMORY PURGE", want: action.ErrForbidden},
		{level: action.Support, line: "MEMORY PURGE", want: action.ErrForbidden},
		{level: action.Admin, line: "MEMORY PURGE", want: action.ErrForbidden},
		{level: action.Admin, line: "MEMORY PURGE", flag: true, class: console.Dangerous},
		{level: action.Admin, line: "CLIENT PAUSE 10", want: action.ErrForbidden},
		{level: action.Admin, line: "CLIENT PAUSE 10", flag: true, class: console.Dangerous},
		{level: action.Admin, line: "CLIENT UNPAUSE", flag: true, class: console.Dangerous},
		{level: action.Admin, line: "CLIENT UNBLOCK 1", flag: true, class: console.Dangerous},
		{level: action.Admin, line: "CONFIG RESETSTAT", flag: true, class: console.Dangerous},
		{level: action.Admin, line: "SLOWLOG RESET", flag: true, class: console.Dangerous},
		{level: action.Viewer, line: "CLIENT NO-EVICT on", want: action.ErrInvalid},
		{level: action.Viewer, line: "MEMORY STATS", want: action.ErrForbidden, page: console.ServerPage},
		{level: action.Viewer, line: "PUBSUB CHANNELS", want: action.ErrForbidden, page: console.PubSubPage},
		{level: action.Viewer, line: "CLIENT LIST", want: action.ErrForbidden, page: console.ClientsPage},
		{level: action.Viewer, line: "PING", class: console.Read},
		{level: action.Viewer, line: "ECHO x", class: console.Read},
		{level: action.Viewer, line: "TIME", class: console.Read},
		{level: action.Viewer, line: "DBSIZE", class: console.Read},
		{level: action.Viewer, line: "COMMAND COUNT", class: console.Read},
		{level: action.Viewer, line: "COMMAND INFO get", class: console.Read},
		{level: action.Viewer, line: "CONFIG HELP", class: console.Read},
	})
	for _, line := range []string{"MEMORY PURGE", "CLIENT PAUSE 10", "CONFIG RESETSTAT"} {
		_, err := decide(t, cl, tab, action.Viewer, line)
		if err == nil || strings.Contains(err.Error(), "shows") || strings.Contains(err.Error(), "changes nothing") {
			t.Errorf("%s is refused as what it is, not as a read: %v", line, err)
		}
	}
}

// A line that may carry a secret is refused as a dangerous command (the
// audit log would hold it) and kept in the history by its name only.
func TestCarriesSecret(t *testing.T) {
	for line, want := range map[string]bool{
		"AUTH pw": true, "auth user pw": true, "HELLO 3 AUTH u p": true, "HELLO 3": false,
		"ACL SETUSER x on >pw": true, `MIGRATE h 1 "" 0 10 AUTH pw KEYS a`: true, `MIGRATE h 1 "" 0 10 auth2 u p KEYS a`: true,
		`MIGRATE h 1 k 0 10`: false, "CONFIG SET requirepass x": true, "CONFIG SET maxmemory 1 masterauth x": true,
		"CONFIG SET maxmemory 1": false, "config set tls-key-file-pass x": true, "CONFIG GET requirepass": false,
		"MODULE LOADEX /m.so CONFIG p secret": true, "MODULE LOAD /m.so pw": true, "MODULE LIST": false,
		"GET auth": false, "SET k auth": false,
	} {
		args, _ := console.Split(line)
		if got := console.CarriesSecret(args); got != want {
			t.Errorf("CarriesSecret(%s) = %v", line, got)
		}
	}
	rs := redistest.Start(t)
	cl, tab := table(t, rs, 3)
	checkVerdicts(t, cl, tab, []verdict{
		{level: action.Admin, line: "MODULE LOADEX /m.so CONFIG p secret", flag: true, want: action.ErrForbidden},
		{level: action.Admin, line: "MODULE LOAD /m.so pw", flag: true, want: action.ErrForbidden},
	})
	h := console.NewHistory(rs.Client(0))
	ctx := context.Background()
	for _, line := range []string{"CONFIG SET masterauth hunter2", "MODULE LOADEX /m.so ARGS hunter2"} {
		args, _ := console.Split(line)
		if err := h.Add(ctx, "ada", args, false); err != nil {
			t.Fatal(err)
		}
	}
	got, err := h.List(ctx, "ada")
	if err != nil || len(got) != 2 {
		t.Fatalf("history %+v, %v", got, err)
	}
	for _, e := range got {
		if strings.Contains(e.Line, "hunter2") || !e.Withheld {
			t.Errorf("history keeps a secret: %+v", e)
		}
	}
}

// What the audit record keeps of a dangerous command's answer: its type
// and size, never its text.
func TestReplyShape(t *testing.T) {
	for _, tt := range []struct {
		v    any
		err  error
		want string
	}{
		{"s3cret-value", nil, "a string of 12 bytes"},
		{"OK", nil, "a string of 2 bytes"},
		{int64(42), nil, "an integer"},
		{[]any{"a", "b"}, nil, "an array of 2 elements"},
		{map[any]any{"k": "v"}, nil, "a map of 1 entry"},
		{nil, redis.Nil, "nil"},
	} {
		if got := console.Format(tt.v, tt.err).Shape; got != tt.want {
			t.Errorf("shape of %v = %q, want %q", tt.v, got, tt.want)
		}
	}
}
