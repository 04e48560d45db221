package demo

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
)

var updateTable = flag.Bool("update-redis-table", false, "rewrite redistable.json.gz from the installed redis-server")

// captureTable reads, from a real redis-server started with its defaults,
// what the demo answers from: its command table and its configuration.
func captureTable(t *testing.T) *redisTable {
	srv := redistest.Start(t)
	rc := dialRaw(t, srv.Addr, 3)
	tab := &redisTable{Info: map[string]reply{}, Docs: map[string]reply{}}
	hello := rc.do("HELLO", "3")
	v, _ := hello.get("version")
	tab.Version = v.S
	// Redis lists subcommands in its dictionary's order, which changes
	// from run to run: the table keeps them sorted.
	for _, e := range rc.do("COMMAND", "INFO").A {
		sort.Slice(e.A[9].A, func(i, j int) bool { return e.A[9].A[i].A[0].S < e.A[9].A[j].A[0].S })
		tab.Info[e.A[0].S] = e
	}
	docs := rc.do("COMMAND", "DOCS")
	for i := 0; i+1 < len(docs.A); i += 2 {
		d := docs.A[i+1]
		for j := 0; j+1 < len(d.A); j += 2 {
			if d.A[j].S == "subcommands" {
				d.A[j+1] = sortedMap(d.A[j+1])
			}
		}
		tab.Docs[docs.A[i].S] = d
	}
	cfg := rc.do("CONFIG", "GET", "*")
	for i := 0; i+1 < len(cfg.A); i += 2 {
		tab.Config = append(tab.Config, [2]string{cfg.A[i].S, cfg.A[i+1].S})
	}
	sort.Slice(tab.Config, func(i, j int) bool { return tab.Config[i][0] < tab.Config[j][0] })
	// Setting a parameter to the value it has changes nothing, and tells
	// which ones Redis refuses to change at run time.
	for _, p := range tab.Config {
		if r := rc.do("CONFIG", "SET", p[0], p[1]); r.K == "-" && strings.Contains(r.S, "immutable") {
			tab.Immutable = append(tab.Immutable, p[0])
		}
	}
	return tab
}

// TestRedisTableIsTheInstalledRedis keeps the embedded table true: it is
// what the installed redis-server (7.0) answers. With -update-redis-table it
// rewrites the file instead.
func TestRedisTableIsTheInstalledRedis(t *testing.T) {
	t.Parallel()
	got := captureTable(t)
	if *updateTable {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err := json.NewEncoder(zw).Encode(got); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("redistable.json.gz", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := loadRedisTable()
	if got.Version != want.Version {
		t.Fatalf("the installed redis-server is %s, the table is %s's: regenerate it with -update-redis-table", got.Version, want.Version)
	}
	// The generator's own port, directory and the like differ by run.
	for _, p := range []string{"port", "dir", "pidfile", "logfile", "unixsocket"} {
		got.setConfig(p, want.config(p))
	}
	// Through JSON, as the file holds it: an empty list and none are one.
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("redistable.json.gz differs from the installed redis-server %s: go test ./internal/demo -run TestRedisTableIsTheInstalledRedis -update-redis-table", got.Version)
	}
}

// sortedMap returns a map reply with its fields in name order.
func sortedMap(m reply) reply {
	type kv struct{ k, v reply }
	var kvs []kv
	for i := 0; i+1 < len(m.A); i += 2 {
		kvs = append(kvs, kv{m.A[i], m.A[i+1]})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].k.S < kvs[j].k.S })
	out := reply{K: m.K}
	for _, e := range kvs {
		out.A = append(out.A, e.k, e.v)
	}
	return out
}
