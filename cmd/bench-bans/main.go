// Command bench-bans measures the bans page's reads on a real redis-server
// holding a large ban list (eIsland's user:ban:set and user:ban:bloom in
// database 9): the list's health, a whole consistency pass (every member's
// bloom bits, four SSCAN pages a step), a page of members, a name check
// and the in-memory rebuild of the bloom from the set. For each it gives
// the time, and for every Redis command it sent the calls and Redis's own
// time per call (INFO commandstats), and the slowest command in SLOWLOG;
// the target is no command over 2 ms.
//
//	go run ./cmd/bench-bans [-bans 50000]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/benchkit"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/schema"
)

const db = 9

func main() {
	n := flag.Int("bans", 50_000, "banned names to load")
	flag.Parse()
	if err := bench(*n); err != nil {
		fmt.Fprintln(os.Stderr, "bench-bans:", err)
		os.Exit(1)
	}
}

func bench(n int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "keydeck-bench-bans")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stop, err := redistest.Launch(dir, "--slowlog-log-slower-than", "100", "--slowlog-max-len", "100000")
	if err != nil {
		return err
	}
	defer stop()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "bench", URL: "redis://" + addr}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("eisland"))
	var l bans.List
	for _, cand := range bans.Lists(conn) {
		if cand.Bans {
			l = cand
		}
	}
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	defer c.Close()
	t0 := time.Now()
	if err := load(ctx, c, l, n); err != nil {
		return err
	}
	fmt.Printf("loaded %d bans into %s and %s in %s\n", n, l.SetKey, l.BloomKey, time.Since(t0).Round(time.Millisecond))
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		return err
	}
	if err := c.SlowLogReset(ctx).Err(); err != nil {
		return err
	}
	rdb := conn.DB(db)
	steps := []struct {
		name string
		run  func() error
	}{
		{"health", func() error { _, err := bans.ReadHealth(ctx, rdb, l); return err }},
		{"consistency pass", func() error {
			ck := bans.CheckerFor(conn, l)
			ck.MinGap = 0
			for st := (bans.Status{}); st.Last == nil; {
				if st, err = ck.Step(ctx, rdb, time.Now(), 4); err != nil {
					return err
				}
			}
			return nil
		}},
		{"a page of members", func() error { _, err := bans.Members(ctx, rdb, l, "99", 0, bans.PageSize); return err }},
		{"a name check", func() error { _, err := bans.CheckName(ctx, rdb, l, "user-012345"); return err }},
		{"rebuild in memory", func() error { _, err := bans.Build(ctx, rdb, l); return err }},
	}
	for _, s := range steps {
		t := time.Now()
		if err := s.run(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("%-18s %s\n", s.name, time.Since(t).Round(time.Microsecond))
	}
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return err
	}
	fmt.Println("per command (Redis's own time):")
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") || name == "info" || name == "config" || name == "slowlog" {
			continue
		}
		calls, perCall := "", 0.0
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				calls = v
			case "usec_per_call":
				perCall, _ = strconv.ParseFloat(v, 64)
			}
		}
		fmt.Printf("  %-10s %8s calls %9.1f µs/call\n", name, calls, perCall)
	}
	slow, err := benchkit.Slowest(ctx, c)
	if err != nil {
		return err
	}
	fmt.Println("slowest:", slow)
	return nil
}

// load writes n names to the set and their bits to the bloom, built in
// memory and SET whole (what SETBIT on each position gives).
func load(ctx context.Context, c *redis.Client, l bans.List, n int) error {
	bloom := make([]byte, (l.Bits+7)/8)
	members := make([]any, 0, 5000)
	for i := range n {
		name := fmt.Sprintf("user-%06d", i)
		for _, off := range l.Positions(name) {
			bloom[off/8] |= 0x80 >> (off % 8)
		}
		if members = append(members, name); len(members) == cap(members) || i == n-1 {
			if err := c.SAdd(ctx, l.SetKey, members...).Err(); err != nil {
				return err
			}
			members = members[:0]
		}
	}
	return c.Set(ctx, l.BloomKey, bloom, 0).Err()
}
