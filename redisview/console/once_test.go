package console_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/console"
)

// debugCalls is how many DEBUG commands the server has run (INFO
// commandstats), waiting for a count of at least want (a DEBUG SLEEP
// still sleeping is counted when it ends).
func debugCalls(t *testing.T, cl *redis.Client, want int) int {
	t.Helper()
	n := 0
	deadline := time.Now().Add(5 * time.Second)
	for {
		txt, err := cl.Info(context.Background(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for _, line := range strings.Split(txt, "\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_debug:calls="); ok {
				calls, _, _ := strings.Cut(rest, ",")
				n, _ = strconv.Atoi(calls)
			}
		}
		if n >= want || time.Now().After(deadline) {
			return n
		}
		<-time.After(20 * time.Millisecond)
	}
}

// A console read that waits longer than the pooled clients' 2 s read
// timeout, twice (here: the server paused 4.3 s), is waited for on a
// client of its own, not sent again after 2 s and given up after 4 s; so
// is a dangerous command that runs longer than the pooled clients' 2 s read
// timeout is sent once and waited for (review M4: the pooled client sent
// DEBUG SLEEP / FLUSHALL again after 2 s and recorded "failed"); a reply
// lost past its context is recorded as "unknown", never as failed, and
// never sent again.
func TestTypedCommandsSentOnce(t *testing.T) {
	rs := redistest.Start(t, "--enable-debug-command", "yes")
	ctx := context.Background()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "c", URL: "redis://" + rs.Addr}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	audit := redis.NewClient(&redis.Options{Addr: rs.Addr, DB: 15})
	defer audit.Close()
	plain := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer plain.Close()
	r := action.New(audit, action.Options{Kinds: []action.Kind{console.DangerousKind{}}})
	admin := action.Actor{User: "ann", Level: action.Admin}
	run := func(ctx context.Context, line string) (action.Outcome, error) {
		t.Helper()
		req := action.Request{Conn: "c", Args: map[string]string{console.ArgCommand: line, console.ArgConfirm: "c"}}
		pv, err := r.Preview(ctx, admin, conn, console.KindDangerous, req)
		if err != nil {
			t.Fatalf("preview %s: %v", line, err)
		}
		return r.Execute(ctx, admin, conn, pv)
	}

	if _, err := run(ctx, "DEBUG SLEEP 2.3"); err != nil {
		t.Fatalf("DEBUG SLEEP 2.3: %v", err)
	}
	if n := debugCalls(t, plain, 1); n != 1 {
		t.Fatalf("DEBUG SLEEP ran %d times, want once", n)
	}

	short, cancel := context.WithTimeout(ctx, 600*time.Millisecond)
	defer cancel()
	_, err = run(short, "DEBUG SLEEP 1.2")
	if !errors.Is(err, action.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "may have run") {
		t.Fatalf("a reply lost past the context: %v, want ErrOutcomeUnknown", err)
	}
	if n := debugCalls(t, plain, 2); n != 2 {
		t.Fatalf("DEBUG ran %d times in all, want 2", n)
	}
	recs, _, err := r.Audit().Read(ctx, action.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, rec := range recs {
		if rec.Phase == action.PhaseOutcome {
			outcomes = append(outcomes, rec.Outcome)
		}
	}
	if strings.Join(outcomes, ",") != "unknown,ok" {
		t.Fatalf("outcomes (newest first) %v, want unknown, ok", outcomes)
	}

	on, err := console.At(ctx, conn, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := rs.CommandCalls(ctx)
	if err := plain.Do(ctx, "CLIENT", "PAUSE", "4300", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	if r, err := on.Run(ctx, []string{"GET", "k"}); err != nil || r.Text != "(nil)\n" {
		t.Fatalf("GET during a pause: %q, %v", r.Text, err)
	}
	after, _ := rs.CommandCalls(ctx)
	if n := after["get"] - before["get"]; n != 1 {
		t.Fatalf("a console GET answered after 4.3 s ran %d times, want once", n)
	}
}
