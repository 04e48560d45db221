package handlers_test

import (
	"errors"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// Every kind of topic parses back from its wire name to the same topic,
// carrying the role its fragments need.
func TestTopicsRoundTrip(t *testing.T) {
	t.Parallel()
	w := route.Window{Conn: "main", DB: 14, Key: "mg:score:leaderboard:\xff:x", Start: 50, N: 25}
	f := route.AuditFilter{User: "ada", Key: "k", Since: time.Date(2026, 11, 29, 14, 30, 0, 0, time.UTC)}
	for _, tt := range []struct {
		topic handlers.Topic
		name  string
		role  action.Level
	}{
		{handlers.OverviewTopic{Conn: "main"}, "overview:main", action.Viewer},
		{handlers.DBTopic{Conn: "main", DB: 3}, "dbstats:main:3", action.Viewer},
		{handlers.LeaderboardsTopic{}, "leaderboards:all", action.Viewer},
		{handlers.LeaderboardTopic{Window: w}, "", action.Viewer},
		{handlers.LeaderboardTopic{Window: w, Remove: true}, "", action.Support},
		{handlers.AuditTopic{Filter: f}, "audit:plain:key=k&since=2026-11-29T14%3A30&user=ada", action.Viewer},
		{handlers.AuditTopic{}, "audit:plain:", action.Viewer},
		{handlers.AuditTopic{Undo: true}, "audit:undo:", action.Admin},
		{handlers.BulkTopic{Conn: "main", ID: "20261202T120000-ab", As: "running"}, "bulk:as=running&conn=main&id=20261202T120000-ab", action.Admin},
	} {
		name := tt.topic.String()
		if tt.name != "" && name != tt.name {
			t.Errorf("%#v names itself %q, want %q", tt.topic, name, tt.name)
		}
		got, err := handlers.ParseTopic(name)
		if err != nil || got != tt.topic {
			t.Errorf("%q parses to %#v, %v; want %#v", name, got, err, tt.topic)
			continue
		}
		if got.Level() != tt.role {
			t.Errorf("%q needs %v, want %v", name, got.Level(), tt.role)
		}
	}
	// A mode named without its query is that mode (authorised as such).
	if got, err := handlers.ParseTopic("audit:undo"); err != nil || got.Level() != action.Admin {
		t.Errorf("audit:undo parses to %#v, %v", got, err)
	}
	for _, bad := range []string{"", "bogus", "bogus:x", "overview:", "overview:Bad Name", "dbstats:main:x", "dbstats:main:007",
		"leaderboards:some", "lb:other:conn=main&db=14&k=x", "lb:plain:conn=main&db=x&k=x", "lb:plain:conn=main&db=14",
		"audit:admin:", "audit:plain:since=yesterday", "audit:plain:before=1-1"} {
		if _, err := handlers.ParseTopic(bad); err == nil || !errors.Is(err, handlers.ErrUnknownTopic) {
			t.Errorf("%q: %v, want ErrUnknownTopic", bad, err)
		}
	}
}
