package demo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// These tests send the same commands to a demo host and to a real
// redis-server (the version the demo's command table was captured from)
// and compare the replies: types, field names and semantics, not the
// values that legitimately differ (addresses, times, sizes).

// twin is a demo host and a real redis-server side by side.
type twin struct {
	t    *testing.T
	demo *testHost
	real *redistest.Server
}

func startTwin(t *testing.T, realArgs ...string) *twin {
	t.Helper()
	return &twin{t: t, demo: startHost(t), real: redistest.Start(t, realArgs...)}
}

// conns opens one raw connection to each, speaking proto.
func (tw *twin) conns(proto int) (demo, real *rawConn) {
	return dialRaw(tw.t, tw.demo.addr(), proto), dialRaw(tw.t, tw.real.Addr, proto)
}

// shape describes a reply's types and map field names, not its values.
func shape(r reply) string {
	switch r.K {
	case "*", "~", ">":
		parts := make([]string, len(r.A))
		for i, e := range r.A {
			parts[i] = shape(e)
		}
		return r.K + "[" + strings.Join(parts, " ") + "]"
	case "%":
		var parts []string
		for i := 0; i+1 < len(r.A); i += 2 {
			parts = append(parts, r.A[i].S+"="+shape(r.A[i+1]))
		}
		return "%{" + strings.Join(parts, " ") + "}"
	}
	return r.K
}

// text renders a reply with its values, for messages and exact checks.
func text(r reply) string {
	switch r.K {
	case "*", "~", "%", ">":
		parts := make([]string, len(r.A))
		for i, e := range r.A {
			parts[i] = text(e)
		}
		return r.K + "[" + strings.Join(parts, " ") + "]"
	case ":":
		return fmt.Sprint(r.N)
	case "_":
		return "nil"
	}
	return r.K + r.S
}

// both sends args to each and returns the two replies.
func both(demo, real *rawConn, args ...string) (reply, reply) {
	return demo.do(args...), real.do(args...)
}

func TestAsRedisCommandTable(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		names := d.do("COMMAND", "LIST")
		if len(names.A) < 150 {
			t.Fatalf("RESP%d: COMMAND LIST on the demo has %d names", proto, len(names.A))
		}
		for _, n := range names.A {
			dr, rr := both(d, r, "COMMAND", "INFO", n.S)
			if dr.K != "*" || len(dr.A) != 1 || dr.A[0].K == "_" {
				t.Fatalf("RESP%d: COMMAND INFO %s on the demo = %s", proto, n.S, text(dr))
			}
			de, re := dr.A[0], rr.A[0]
			if len(de.A) > 9 { // subcommands: the demo's are some of Redis's
				for _, sub := range de.A[9].A {
					if !slices.ContainsFunc(re.A[9].A, func(x reply) bool { return text(x) == text(sub) }) {
						t.Errorf("RESP%d: COMMAND INFO %s: subcommand %s differs from Redis's", proto, n.S, text(sub))
					}
				}
				de.A, re.A = de.A[:9], re.A[:9]
			}
			if text(de) != text(re) {
				t.Errorf("RESP%d: COMMAND INFO %s\n demo %s\n real %s", proto, n.S, text(de), text(re))
			}
			if !strings.Contains(n.S, "|") {
				dd, rd := both(d, r, "COMMAND", "DOCS", n.S)
				if shape(dd) == "" || dd.K != rd.K || len(dd.A) != 2 || dd.A[0].S != rd.A[0].S {
					t.Errorf("RESP%d: COMMAND DOCS %s\n demo %s\n real %s", proto, n.S, shape(dd), shape(rd))
				}
			}
		}
		count := d.do("COMMAND", "COUNT")
		all := d.do("COMMAND")
		if count.K != ":" || int(count.N) != len(all.A) || count.N >= r.do("COMMAND", "COUNT").N {
			t.Errorf("RESP%d: COMMAND COUNT %s, COMMAND has %d", proto, text(count), len(all.A))
		}
		// What the demo does not serve is not in its table, as on a server
		// without it: SORT, MIGRATE, ACL, CONFIG REWRITE, CLIENT PAUSE.
		for _, n := range []string{"sort", "migrate", "acl", "config|rewrite", "client|pause", "nosuch"} {
			if got := d.do("COMMAND", "INFO", n); len(got.A) != 1 || got.A[0].K != "_" {
				t.Errorf("RESP%d: COMMAND INFO %s on the demo = %s", proto, n, text(got))
			}
			if got := d.do("COMMAND", "DOCS", n); len(got.A) != 0 {
				t.Errorf("RESP%d: COMMAND DOCS %s on the demo = %s", proto, n, text(got))
			}
		}
		for _, pat := range []string{"x*", "CONFIG|[gs]et", "*get*", "?et"} {
			dl, rl := both(d, r, "COMMAND", "LIST", "FILTERBY", "PATTERN", pat)
			if len(dl.A) == 0 || !subset(dl, rl) {
				t.Errorf("RESP%d: COMMAND LIST FILTERBY PATTERN %s\n demo %s\n real %s", proto, pat, text(dl), text(rl))
			}
		}
		for _, args := range [][]string{
			{"COMMAND", "LIST", "FILTERBY", "PATTERN", "nosuch*"},
			{"COMMAND", "LIST", "FILTERBY", "MODULE", "x"},
			{"COMMAND", "LIST", "FILTERBY", "nosuch", "x"},
			{"COMMAND", "LIST", "FILTERBY"},
			{"COMMAND", "NOSUCH"},
			{"COMMAND", "COUNT", "x"},
			{"COMMAND", "INFO", "get", "config|get", "nosuch"},
		} {
			dr, rr := both(d, r, args...)
			if dt, rt := sortedText(dr), sortedText(rr); dt != rt {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, dt, rt)
			}
		}
		dl, rl := both(d, r, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "stream")
		if len(dl.A) < 10 || !subset(dl, rl) {
			t.Errorf("RESP%d: COMMAND LIST FILTERBY ACLCAT stream\n demo %s\n real %s", proto, text(dl), text(rl))
		}
	}
}

// subset reports whether every name in a is in b.
func subset(a, b reply) bool {
	for _, n := range a.A {
		if !slices.ContainsFunc(b.A, func(x reply) bool { return x.S == n.S }) {
			return false
		}
	}
	return a.K == b.K
}

// sortedText is text with an array's elements sorted (Redis lists commands
// in its dictionary's order).
func sortedText(r reply) string {
	if r.K != "*" {
		return text(r)
	}
	parts := make([]string, len(r.A))
	for i, e := range r.A {
		parts[i] = text(e)
	}
	slices.Sort(parts)
	return "*[" + strings.Join(parts, " ") + "]"
}

func TestAsRedisGetKeys(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	cases := [][]string{
		{"GET", "k"}, {"SET", "k", "v"}, {"SET", "k", "v", "GET"}, {"MGET", "a", "b", "c"},
		{"MSET", "a", "1", "b", "2"}, {"DEL", "a", "b"}, {"RENAME", "a", "b"}, {"LMOVE", "a", "b", "LEFT", "RIGHT"},
		{"ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"}, {"ZUNIONSTORE", "d", "0", "a"},
		{"ZUNIONSTORE", "d", "5", "a", "b"}, {"ZUNIONSTORE", "d", "x", "a"}, {"ZINTER", "2", "a", "b"},
		{"ZINTERCARD", "1", "a", "LIMIT", "2"}, {"SINTERCARD", "2", "a", "b"},
		{"XREAD", "STREAMS", "a", "b", "0", "0"}, {"XREAD", "COUNT", "2", "STREAMS", "a", "0"},
		{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"},
		{"EVAL", "return 1", "0"}, {"EVAL", "return 1", "2", "a", "b", "x"}, {"EVAL", "return 1", "3", "a"},
		{"EVALSHA", "abc", "1", "a"}, {"LMPOP", "2", "a", "b", "LEFT"}, {"BLMPOP", "0", "1", "a", "LEFT"},
		{"ZMPOP", "1", "a", "MIN"}, {"BZMPOP", "0", "2", "a", "b", "MAX"},
		{"GEORADIUS", "a", "1", "2", "3", "km", "STORE", "b"},
		{"GEORADIUS", "a", "1", "2", "3", "km", "STORE", "b", "STOREDIST", "c"},
		{"GEORADIUSBYMEMBER", "a", "m", "3", "km", "STOREDIST", "c"}, {"GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"},
		{"BLPOP", "a", "b", "0"}, {"BRPOPLPUSH", "a", "b", "0"}, {"BITOP", "AND", "d", "a", "b"},
		{"XINFO", "STREAM", "s"}, {"XINFO", "GROUPS", "s"}, {"XGROUP", "CREATE", "s", "g", "$"},
		{"MEMORY", "USAGE", "k"}, {"OBJECT", "ENCODING", "k"}, {"PFCOUNT", "a", "b"}, {"COPY", "a", "b"},
		{"SORT", "a", "STORE", "b"}, {"MIGRATE", "h", "1", "", "0", "5", "KEYS", "a", "b"},
		{"PING"}, {"NOSUCH", "a"}, {"GET"}, {"GET", "a", "b"}, {"CONFIG", "GET", "x"}, {"XINFO"},
		{"PUBLISH", "c", "m"}, {"SUBSCRIBE", "c"},
	}
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		for _, c := range cases {
			for _, sub := range []string{"GETKEYS", "GETKEYSANDFLAGS"} {
				args := append([]string{"COMMAND", sub}, c...)
				dr, rr := both(d, r, args...)
				if info := d.do("COMMAND", "INFO", c[0]); info.A[0].K == "_" && c[0] != "NOSUCH" {
					// Not in the demo's table: refused as unknown.
					if dr.K != "-" || dr.S != "ERR Invalid command specified" {
						t.Errorf("RESP%d: %q on the demo = %s", proto, args, text(dr))
					}
					continue
				}
				if text(dr) != text(rr) {
					t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
				}
			}
		}
	}
}

// clientFields are the field names of a CLIENT LIST line, in order.
func clientFields(line string) []string {
	var out []string
	for _, f := range strings.Fields(line) {
		k, _, _ := strings.Cut(f, "=")
		out = append(out, k)
	}
	return out
}

// clientField is one field's value in a CLIENT LIST line.
func clientField(line, name string) string {
	for _, f := range strings.Fields(line) {
		if k, v, _ := strings.Cut(f, "="); k == name {
			return v
		}
	}
	return "\x00absent"
}

func TestAsRedisClients(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		dOther, rOther := tw.conns(proto)
		both(dOther, rOther, "CLIENT", "SETNAME", "worker-1")
		both(dOther, rOther, "SELECT", "3")
		both(d, r, "CLIENT", "SETNAME", "me")
		dl, rl := both(d, r, "CLIENT", "LIST")
		dLines := strings.Split(strings.TrimSuffix(dl.S, "\n"), "\n")
		rLines := strings.Split(strings.TrimSuffix(rl.S, "\n"), "\n")
		if dl.K != rl.K || len(dLines) != len(rLines) || !strings.HasSuffix(dl.S, "\n") {
			t.Fatalf("RESP%d: CLIENT LIST\n demo %q\n real %q", proto, dl.S, rl.S)
		}
		for i := range dLines {
			if df, rf := clientFields(dLines[i]), clientFields(rLines[i]); !slices.Equal(df, rf) {
				t.Errorf("RESP%d: CLIENT LIST fields\n demo %v\n real %v", proto, df, rf)
			}
			for _, f := range []string{"name", "db", "flags", "multi", "sub", "psub", "user", "resp", "cmd", "events", "obl", "omem"} {
				if dv, rv := clientField(dLines[i], f), clientField(rLines[i], f); dv != rv {
					t.Errorf("RESP%d: CLIENT LIST line %d %s: demo %q, real %q", proto, i, f, dv, rv)
				}
			}
		}
		di, ri := both(d, r, "CLIENT", "INFO")
		if clientField(di.S, "cmd") != "client|info" || clientField(ri.S, "cmd") != "client|info" ||
			!slices.Equal(clientFields(di.S), clientFields(ri.S)) || clientField(di.S, "name") != "me" {
			t.Errorf("RESP%d: CLIENT INFO\n demo %q\n real %q", proto, di.S, ri.S)
		}
		// The address is the connection's, as the client sees it.
		if clientField(di.S, "addr") != d.c.LocalAddr().String() || clientField(di.S, "laddr") != tw.demo.addr() {
			t.Errorf("RESP%d: CLIENT INFO addr %s laddr %s, want %s %s", proto, clientField(di.S, "addr"),
				clientField(di.S, "laddr"), d.c.LocalAddr(), tw.demo.addr())
		}
		dID, rID := both(dOther, rOther, "CLIENT", "ID")
		if dID.K != ":" || rID.K != ":" {
			t.Fatalf("CLIENT ID: demo %s, real %s", text(dID), text(rID))
		}
		for _, args := range [][]string{
			{"CLIENT", "GETNAME"}, {"CLIENT", "SETNAME", "a b"}, {"CLIENT", "SETNAME", "a\nb"}, {"CLIENT", "NOSUCH"},
			{"CLIENT", "LIST", "TYPE", "nosuch"}, {"CLIENT", "LIST", "ID", "x"}, {"CLIENT", "LIST", "ID", "99999"},
			{"CLIENT", "LIST", "nosuch"}, {"CLIENT", "KILL", "1.2.3.4:5"}, {"CLIENT", "KILL", "ID", "x"},
			{"CLIENT", "KILL", "ID", "99999"}, {"CLIENT", "KILL", "nosuch", "x"}, {"CLIENT", "KILL", "USER", "nosuch"},
			{"CLIENT", "KILL", "SKIPME", "maybe"}, {"CLIENT"}, {"CLIENT", "ID", "x"}, {"HELLO", "3", "SETNAME", "a b"},
		} {
			if dr, rr := both(d, r, args...); text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
		if dr := d.do("CLIENT", "LIST", "ID", fmt.Sprint(dID.N)); clientField(dr.S, "name") != "worker-1" ||
			clientField(dr.S, "db") != "3" || strings.Count(dr.S, "\n") != 1 {
			t.Errorf("RESP%d: CLIENT LIST ID %d = %q", proto, dID.N, dr.S)
		}
		// A client in a transaction: flags x, its queued commands.
		both(dOther, rOther, "MULTI")
		both(dOther, rOther, "SET", "a", "b")
		dm := d.do("CLIENT", "LIST", "ID", fmt.Sprint(dID.N))
		rm := r.do("CLIENT", "LIST", "ID", fmt.Sprint(rID.N))
		for _, f := range []string{"flags", "multi", "cmd", "db"} {
			if dv, rv := clientField(dm.S, f), clientField(rm.S, f); dv != rv {
				t.Errorf("RESP%d: in MULTI, %s: demo %q, real %q", proto, f, dv, rv)
			}
		}
		both(dOther, rOther, "DISCARD")
		// Killing a client closes its connection.
		dk, rk := d.do("CLIENT", "KILL", "ID", fmt.Sprint(dID.N)), r.do("CLIENT", "KILL", "ID", fmt.Sprint(rID.N))
		if text(dk) != "1" || text(rk) != "1" {
			t.Errorf("RESP%d: CLIENT KILL ID: demo %s, real %s", proto, text(dk), text(rk))
		}
		_ = dOther.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := readReply(dOther.r); err == nil {
			t.Errorf("RESP%d: the killed client's connection is still open", proto)
		}
		if dl, _ := both(d, r, "CLIENT", "LIST"); strings.Contains(dl.S, "name=worker-1") {
			t.Errorf("RESP%d: the killed client is still listed: %q", proto, dl.S)
		}
	}
}

func TestAsRedisHelloNamesTheClient(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	d, r := tw.conns(2)
	for _, args := range [][]string{{"HELLO", "3", "SETNAME", "keydeck"}, {"CLIENT", "GETNAME"}, {"HELLO", "4"},
		{"HELLO", "x"}, {"HELLO", "3", "AUTH", "default"}, {"HELLO", "3", "SETNAME"}, {"HELLO", "3", "NOSUCH"},
		{"HELLO", "2", "AUTH", "default", "any"}, {"HELLO", "2", "AUTH", "nosuch", "x"}} {
		if dr, rr := both(d, r, args...); shape(dr) != shape(rr) || args[0] == "CLIENT" && text(dr) != text(rr) {
			t.Errorf("%q\n demo %s\n real %s", args, text(dr), text(rr))
		}
	}
}

// go-redis, as Keydeck uses it (RESP3, a client name), reads the demo's
// verbatim strings and sees its name.
func TestGoRedisReadsTheDemosReports(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	c := redis.NewClient(&redis.Options{Addr: th.addr(), ClientName: "keydeck", DisableIdentity: true, PoolSize: 1})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	list, err := c.ClientList(ctx).Result()
	if err != nil || !strings.HasPrefix(list, "id=") || clientField(list, "name") != "keydeck" || clientField(list, "resp") != "3" {
		t.Errorf("CLIENT LIST = %q, %v", list, err)
	}
	if info, err := c.Info(ctx, "server").Result(); err != nil || !strings.HasPrefix(info, "# Server\r\n") {
		t.Errorf("INFO server = %q, %v", info, err)
	}
	if doc, err := c.Do(ctx, "LATENCY", "DOCTOR").Text(); err != nil || !strings.HasPrefix(doc, "I'm sorry, Dave") {
		t.Errorf("LATENCY DOCTOR = %q, %v", doc, err)
	}
}

func TestAsRedisBlockedClient(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	d, r := tw.conns(2)
	dw, rw := tw.conns(2)
	dw.send("BLPOP", "jobs", "0")
	rw.send("BLPOP", "jobs", "0")
	// Each server takes the waiting client in its own time: ask until it
	// shows blocked (bounded by the connection's deadline).
	blocked := func(c *rawConn) string {
		deadline := time.Now().Add(5 * time.Second)
		for {
			l := c.do("CLIENT", "LIST", "TYPE", "normal")
			for _, line := range strings.Split(l.S, "\n") {
				if clientField(line, "cmd") == "blpop" && clientField(line, "flags") == "b" || time.Now().After(deadline) {
					return line
				}
			}
		}
	}
	dl, rl := blocked(d), blocked(r)
	for _, f := range []string{"flags", "cmd"} {
		if dv, rv := clientField(dl, f), clientField(rl, f); dv != rv {
			t.Errorf("blocked client's %s: demo %q, real %q", f, dv, rv)
		}
	}
	di, ri := both(d, r, "INFO", "clients")
	if !strings.Contains(di.S, "blocked_clients:1\r\n") || !strings.Contains(ri.S, "blocked_clients:1\r\n") {
		t.Errorf("INFO clients\n demo %q\n real %q", di.S, ri.S)
	}
	both(d, r, "LPUSH", "jobs", "j1")
	if dv, rv := dw.readNext(), rw.readNext(); text(dv) != text(rv) {
		t.Errorf("BLPOP: demo %s, real %s", text(dv), text(rv))
	}
	if di, _ := both(d, r, "INFO", "clients"); !strings.Contains(di.S, "blocked_clients:0\r\n") {
		t.Errorf("INFO clients once unblocked: %q", di.S)
	}
}
