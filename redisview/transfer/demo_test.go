package transfer_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview/transfer"
)

// On the embedded demo, as on Redis, import makes the empty streams
// export writes: one that never had an entry (last ID 0-0) and one
// emptied (last ID kept); the key "" is written and read back.
func TestEdgeKeysOnTheDemo(t *testing.T) {
	ctx := context.Background()
	d, err := demo.Start(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	opt, err := redis.ParseURL(d.Connections()[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.DB = 14
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	for _, line := range []string{
		`{"key":"mk","type":"stream","ttl_ms":null,"value":{"entries":[],"last_id":"0-0"}}`,
		`{"key":"drained","type":"stream","ttl_ms":null,"value":{"entries":[],"last_id":"7-3"}}`,
		`{"key":"","type":"string","ttl_ms":60000,"value":"empty-name"}`,
	} {
		r, err := transfer.ParseLine([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if err := transfer.Write(ctx, c, r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		back, ok, err := (&transfer.Reader{C: c}).Read(ctx, string(r.Key))
		if err != nil || !ok || !transfer.Same(back, r) {
			t.Errorf("%s: read back %+v %v %v", line, back, ok, err)
		}
	}
}
