package handlers_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/route"
)

// tickTrips records a client's round trips (a command sent alone, or a
// pipeline), marking each key-list tick by its first read: the pipeline
// of TYPE, PTTL and length of the page's keys.
type tickTrips struct {
	mu    sync.Mutex
	ticks []int // round trips of each tick, its first read included
}

func (h *tickTrips) trip(first string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case first == "hello" || first == "client" || first == "select":
		return // a new connection's handshake
	case first == "type" && n >= 100:
		h.ticks = append(h.ticks, 0)
	case len(h.ticks) == 0:
		return
	}
	h.ticks[len(h.ticks)-1]++
}

func (h *tickTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *tickTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.trip(cmd.Name(), 1)
		return next(ctx, cmd)
	}
}
func (h *tickTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 {
			h.trip(cmds[0].Name(), len(cmds))
		}
		return next(ctx, cmds)
	}
}

// A live key list of 50 counters costs Redis a few round trips a tick
// (the page's read, then the decoders' steps, every row's together), not
// one per command of each row; the rows still carry their own summary.
func TestKeysTopicRoundTripsPerTick(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	ctx := context.Background()
	p := f.redis.Client(4).Pipeline()
	for i := range 50 {
		p.Set(ctx, "verify:slider:fail:account:"+demo.SliderKeyPart(fmt.Sprintf("user%02d", i)), i%4, 10*time.Minute)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	h := &tickTrips{}
	f.reg.All()[0].DB(4).AddHook(h)
	_, _, body := get(t, f.srv.URL+route.FamilyKeysURL("main", 4, "slider-fail-account"))
	ws, ok := doc(t, body).Find(`[data-testid="live"]`).Attr("ws-connect")
	if !ok {
		t.Fatalf("no live list: %.600s", body)
	}
	topic, err := url.QueryUnescape(strings.TrimPrefix(ws, "/ws?topic="))
	if err != nil {
		t.Fatal(err)
	}
	frames := topicFrames(t, f, topic)
	frame := waitFrame(t, frames, "the live rows", `data-testid="key-summary"`)
	for _, want := range []string{"0 of 3 in this window", "1 of 3 in this window", "2 of 3 in this window", "3 of 3 in this window"} {
		if strings.Count(frame, want) < 12 {
			t.Errorf("%q in %d rows, want at least 12", want, strings.Count(frame, want))
		}
	}
	// The first "tick" is the page's own read, and the topic's first
	// poll walks the list (SCAN) before its read: four ticks after them.
	waitFor(t, "four ticks", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.ticks) >= 6 })
	h.mu.Lock()
	ticks := append([]int(nil), h.ticks[1:5]...)
	h.mu.Unlock()
	t.Logf("round trips per tick of a 50-counter list: %v", ticks)
	for _, n := range ticks {
		// One read of the page's keys, then STRLEN, GET and PTTL of
		// every counter together.
		if n > 4 {
			t.Errorf("a tick cost %d round trips (%v), want at most 4", n, ticks)
		}
	}
}
