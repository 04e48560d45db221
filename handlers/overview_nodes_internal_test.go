package handlers

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
)

// A policy that cannot be read is said "not readable", never guessed and
// never flagged; on a vertique connection the row says the eviction
// question stays open. A known policy other than noeviction is flagged on
// vertique only.
func TestHeadroomPolicyRows(t *testing.T) {
	t.Parallel()
	vt := redisview.PackChoice{Pack: schema.BuiltinPack("vertique")}
	ei := redisview.PackChoice{Pack: schema.BuiltinPack("eisland")}
	refused := redisview.None[string]("not readable: CONFIG GET is not permitted for this Redis user (ACL)")
	for _, c := range []struct {
		name       string
		policy     redisview.Opt[string]
		pc         redisview.PackChoice
		want       string
		flag       bool
		whyContain string
	}{
		{"vertique lru", redisview.Some("allkeys-lru"), vt, "allkeys-lru", true, "non-evicting"},
		{"vertique volatile", redisview.Some("volatile-ttl"), vt, "volatile-ttl", true, "non-evicting"},
		{"vertique noeviction", redisview.Some("noeviction"), vt, "noeviction", false, ""},
		{"eisland lru", redisview.Some("allkeys-lru"), ei, "allkeys-lru", false, ""},
		{"no pack", redisview.Some("allkeys-lru"), redisview.PackChoice{}, "allkeys-lru", false, ""},
		{"vertique refused", refused, vt, "not readable", false, "cannot be told"},
		{"eisland refused", refused, ei, "not readable", false, "ACL"},
	} {
		rows, _ := headroomVM([]stats.Headroom{{Policy: c.policy, Used: redisview.Some[int64](10), Max: redisview.Some[int64](0), Keys: redisview.Some[int64](3)}}, c.pc)
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows", c.name, len(rows))
		}
		r := rows[0]
		if r.Policy != c.want || r.PolicyBad != c.flag || !strings.Contains(r.PolicyWhy, c.whyContain) || r.Keys != "3" || !strings.HasPrefix(r.Room, "no maxmemory set") {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
}

// A failed primary whose slots went to its replica is named as such, with
// why; a replica says whose it is.
func TestNodeRowRoles(t *testing.T) {
	t.Parallel()
	failed := nodeRow(stats.NodeStats{ID: "0123456789abcdef", Addr: "10.0.0.1:7000", Primary: true, Fail: true, Err: "not reachable: connection refused"})
	if failed.Role != "failed primary" || failed.Primary || !failed.Failing || !strings.Contains(failed.Problem, "flagged fail") || failed.ShortID != "01234567" {
		t.Errorf("failed: %+v", failed)
	}
	rep := nodeRow(stats.NodeStats{Addr: "10.0.0.2:7000", PrimaryAddr: "10.0.0.3:7000", LinkUp: true, LagBytes: redisview.Some[int64](2048), IOAgo: redisview.Some[int64](1)})
	if rep.Role != "replica of 10.0.0.3:7000" || rep.Failing || rep.Lag != "2.0 KiB behind, heard 1 second ago" {
		t.Errorf("replica: %+v", rep)
	}
}

// A sentinel connection's overview names the primary, its replicas with
// their lag and the last failover, even when the primary cannot be read.
func TestOverviewSentinelPanel(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ov := stats.Overview{Conn: "s", Status: redisview.Status{Up: false, Checked: at, Since: at}, At: at, Err: "dial tcp: connection refused",
		Sentinel: &stats.SentinelStats{Master: "keydeck", Asked: "127.0.0.1:26379", Primary: "127.0.0.1:6380", PrimaryFlags: "master",
			Sentinels: 3, Quorum: 2, CkQuorum: redisview.Some("OK 3 usable Sentinels. Quorum and failover authorization can be reached"),
			Replicas:     []stats.SentinelReplica{{Addr: "127.0.0.1:6379", Flags: "s_down,slave,disconnected", LagBytes: redisview.None[int64]("x"), LagSec: redisview.None[int64]("x")}},
			LastFailover: &stats.Failover{At: at, From: "127.0.0.1:6379", To: "127.0.0.1:6380"}}}
	vm := overviewVM(ov, at)
	var b bytes.Buffer
	if err := views.OverviewLive(vm, true).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`data-testid="sentinel-primary">127.0.0.1:6380<`, "3 sentinels known, quorum 2", `from 127.0.0.1:6379 to 127.0.0.1:6380, seen at <time title="12:00:00 UTC" data-local="clock" data-testid="time">12:00:00 UTC</time>`, `data-testid="sentinel-replica"`, "s_down,slave,disconnected"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}
