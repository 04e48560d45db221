package handlers_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// demoConns starts the embedded demo for one test (stopped at its end)
// and names its servers as go run ./cmd/web connects to them.
func demoConns(t *testing.T) []redisview.ConnConfig {
	t.Helper()
	d, err := demo.Start(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	var conns []redisview.ConnConfig
	for _, dc := range d.Connections() {
		conns = append(conns, redisview.ConnConfig{Name: dc.Name, URL: dc.URL})
	}
	return conns
}

// demoConsole is a console on the embedded demo with the test users
// signed in by name (newBrowserAs), its audit log on a real redis-server.
func demoConsole(t *testing.T) (*console, []redisview.ConnConfig) {
	t.Helper()
	conns := demoConns(t)
	f := startConsole(t, redistest.Start(t), server.Config{Demo: true, Conns: conns,
		Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}}, nil).up(t)
	return f, conns
}
