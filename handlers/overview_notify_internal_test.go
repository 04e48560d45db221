package handlers

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// The overview says keyspace events are enabled only once Keydeck uses
// them: turned on at runtime, they are "not used yet" until the watcher's
// subscription is up; flags without K are events Keydeck does not follow.
func TestNotificationsTileIsHonest(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		flags redisview.Opt[string]
		ks    redisview.KeyspaceState
		value string
	}{
		{"on, subscribed", redisview.Some("Kz"), redisview.KeyspaceState{Flags: "Kz", Subscribed: true, Since: at}, "enabled"},
		{"turned on, not subscribed yet", redisview.Some("Kz"), redisview.KeyspaceState{Flags: ""}, "enabled, not used yet"},
		{"keyevent only", redisview.Some("Ex"), redisview.KeyspaceState{Flags: "Ex"}, "not used (no K)"},
		{"off", redisview.Some(""), redisview.KeyspaceState{}, "disabled"},
		// Refused (ACL, managed Redis): not known, which is not "disabled".
		{"CONFIG refused", redisview.None[string]("CONFIG GET is not permitted for this Redis user (ACL)"), redisview.KeyspaceState{Refused: true}, "unknown (CONFIG refused)"},
	} {
		vm := overviewVM(stats.Overview{Conn: "main", Status: redisview.Status{Up: true, Checked: at},
			Server: stats.ServerStats{Notifications: c.flags, Keyspace: c.ks}}, at)
		var got string
		for _, tl := range vm.Server {
			if tl.TestID == "notifications" {
				got = tl.Value
			}
		}
		if got != c.value {
			t.Errorf("%s: tile says %q, want %q", c.name, got, c.value)
		}
	}
}
