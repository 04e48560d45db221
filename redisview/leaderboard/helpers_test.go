package leaderboard_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/keydeck/keydeck/redisview"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openConn(t *testing.T, url string) *redisview.Conn {
	t.Helper()
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: url}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
