package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/console"
)

// Each user's history is capped, newest first, expires, keeps arguments
// byte for byte, and keeps only the command of a line on a sensitive key.
func TestHistory(t *testing.T) {
	rs := redistest.Start(t)
	cl := rs.Client(15)
	ctx := context.Background()
	h := console.NewHistory(cl)
	h.Max = 3
	for _, line := range [][]string{{"GET", "a"}, {"GET", "b"}, {"GET", "\xff x"}, {"HGETALL", "h"}} {
		if err := h.Add(ctx, "user:ada", line, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Add(ctx, "user:ada", []string{"GET", "totp:secret:ada"}, true); err != nil {
		t.Fatal(err)
	}
	got, err := h.List(ctx, "user:ada")
	if err != nil {
		t.Fatal(err)
	}
	want := []console.Entry{{Line: "GET", Withheld: true}, {Line: "HGETALL h"}, {Line: `GET "\xff x"`}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("history = %+v, want %+v", got, want)
	}
	if args, _ := console.Split(got[2].Line); args[1] != "\xff x" {
		t.Errorf("argument not kept byte for byte: %q", args)
	}
	if other, _ := h.List(ctx, "user:vera"); len(other) != 0 {
		t.Errorf("another user's history: %+v", other)
	}
	const key = "keydeck:console:history:user:ada"
	if n := cl.DBSize(ctx).Val(); n != 1 || cl.Exists(ctx, key).Val() != 1 {
		t.Fatalf("%d keys; %s missing", n, key)
	}
	if ttl := cl.TTL(ctx, key).Val(); ttl <= 29*24*time.Hour {
		t.Errorf("TTL %s", ttl)
	}
	for _, e := range got {
		if e.Line == "GET totp:secret:ada" {
			t.Error("a sensitive key's line kept its arguments")
		}
	}
}
