package redisview

import (
	"io"
	"log/slog"
	"testing"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openConn(t *testing.T, url string) *Conn {
	t.Helper()
	c, err := Open(ConnConfig{Name: "t", URL: url}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
