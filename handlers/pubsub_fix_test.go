package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/views/format"
)

// A watch writes nothing: on a read-only console support still watches,
// and the page offers what the websocket serves.
func TestPubSubWatchOnReadOnlyConsole(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.ReadOnly = true })
	sam := newBrowserAs(t, f, "sam")
	code, _, body := sam.do(http.MethodGet, route.PubSubURL("main")+"?watch=orders&mode=channel", nil)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="watch-form"`) || strings.Contains(body, `data-testid="watch-note"`) {
		t.Fatalf("support's watch page on a read-only console: %d", code)
	}
	topic := handlers.PubSubWatchTopic{Conn: "main", Mode: "channel", Name: "orders"}.String()
	if ws, code := wsAs(t, sam, topic); ws == nil {
		t.Fatalf("support's watch websocket on a read-only console: %d, want it served", code)
	}
}

// The watch says a cut payload's whole size, and says when its
// subscription was lost: the server dropping it, then the node's client
// closed for good (the watch starts again on a later poll).
func TestPubSubWatchSaysSizeAndLoss(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	pub := f.redis.Client(0)
	defer pub.Close()
	sam := newBrowserAs(t, f, "sam")
	ws, code := wsAs(t, sam, handlers.PubSubWatchTopic{Conn: "main", Mode: "channel", Name: "big"}.String())
	if ws == nil {
		t.Fatalf("watch websocket: %d", code)
	}
	waitFor(t, "the watch subscribed", func() bool {
		n, _ := pub.PubSubNumSub(ctx, "big").Result()
		return n["big"] == 1
	})
	pub.Publish(ctx, "big", strings.Repeat("x", 2000))
	if m := readUntil(t, ws, `data-testid="message"`); !strings.Contains(m, format.ByteCount(2000)+" in all") {
		t.Errorf("a 2000-byte payload's size is not said: %.3000s", m)
	}
	pub.Do(ctx, "client", "kill", "type", "pubsub")
	readUntil(t, ws, "lost and came back")
}
