package console_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/console"
)

// Reads are bounded by the bytes their keys hold together, not only by
// element counts (review M5): a large string through GET (a @fast
// command, never measured before), a hash of a few huge fields through
// HGETALL (3 fields pass the element bound), many keys through MGET.
func TestReadBoundedByBytes(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "c", URL: rs.URL(0)}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw := rs.Client(0)
	big, part := strings.Repeat("x", 2<<20), strings.Repeat("y", 400<<10)
	raw.Set(ctx, "big", big, 0)
	raw.HSet(ctx, "fat", "a", part, "b", part, "c", part)
	// Many small fields and one large one: a sample of five fields sees
	// only small ones (review C M1).
	hidden := []any{"zz-big", big}
	for i := range 999 {
		hidden = append(hidden, fmt.Sprintf("f%03d", i), "v")
	}
	raw.HSet(ctx, "hidden", hidden...)
	for _, k := range []string{"p1", "p2", "p3"} {
		raw.Set(ctx, k, part, 0)
	}
	on, err := console.At(ctx, conn, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := on.Table(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		line, refusedKey string
	}{
		{"GET big", "big"},
		{"HGETALL fat", "fat"},
		{"HGETALL hidden", "hidden"},
		{"MGET p1 p2 p3", "p1"},
		{"MGET p1 p2", ""},
		{"STRLEN big", ""}, // reads no value
		{"TTL big", ""},
		{"HLEN fat", ""},
		{"GET nosuch", ""},
	} {
		args, _ := console.Split(tt.line)
		d, err := on.Decide(ctx, tab, console.Request{Args: args, Level: action.Viewer})
		if err != nil {
			t.Fatalf("%s: decide: %v", tt.line, err)
		}
		r, err := on.Read(ctx, d, args)
		var refused *console.Refused
		switch {
		case tt.refusedKey == "" && err != nil:
			t.Errorf("%s: %v", tt.line, err)
		case tt.refusedKey == "":
			if strings.HasPrefix(r.Text, "(error)") {
				t.Errorf("%s: %s", tt.line, r.Text)
			}
		case !errors.As(err, &refused) || !errors.Is(err, action.ErrForbidden) || refused.Page != console.KeyPage || refused.Key != tt.refusedKey:
			t.Errorf("%s: %v (%+v), want a refusal linking %q's page", tt.line, err, refused, tt.refusedKey)
		case !strings.Contains(err.Error(), "1.0 MiB for one command"):
			t.Errorf("%s: %v does not say the bound", tt.line, err)
		}
	}
}
