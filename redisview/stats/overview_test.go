package stats

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

func TestOverviewFromInfo(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	db0, db5 := s.Client(0), s.Client(5)
	for i := range 10 {
		db0.Set(ctx, "k"+string(rune('a'+i)), "v", 0)
	}
	db5.Set(ctx, "ttl1", "v", time.Hour)
	db5.Set(ctx, "ttl2", "v", time.Hour)
	db5.Set(ctx, "forever", "v", 0)

	r := NewOverviewReader(openConn(t, s.URL(0)))
	ov := r.Read(ctx)
	if ov.Err != "" {
		t.Fatalf("read error: %s", ov.Err)
	}
	if o := ov.Server.OpsPerSec; !o.Pending {
		t.Fatalf("ops/sec on the first read: %+v", o)
	}
	if ov.KeyspaceSource != SourceInfo {
		t.Fatalf("source = %q", ov.KeyspaceSource)
	}
	if len(ov.DBs) != 2 || ov.DBs[0].Index != 0 || ov.DBs[0].Keys != 10 || ov.DBs[1].Index != 5 || ov.DBs[1].Keys != 3 {
		t.Fatalf("dbs = %+v", ov.DBs)
	}
	if e := ov.DBs[1].Expires; !e.OK || e.V != 2 {
		t.Fatalf("db5 expires = %+v", e)
	}
	// Redis estimates avg_ttl in its background expire cycle (10 Hz).
	redistest.Eventually(t, 5*time.Second, "db5's avg_ttl", func() bool {
		if !ov.DBs[1].AvgTTL.OK {
			ov = r.Read(ctx)
		}
		return ov.DBs[1].AvgTTL.OK
	})
	if a := ov.DBs[1].AvgTTL; !a.OK || a.V < 50*time.Minute || a.V > time.Hour {
		t.Fatalf("db5 avg ttl = %+v", a)
	}
	// Rates compare two reads.
	ov = r.Read(ctx)
	sv := ov.Server
	if !sv.Version.OK || !strings.HasPrefix(sv.Version.V, "7") && !strings.HasPrefix(sv.Version.V, "6") {
		t.Fatalf("version = %+v", sv.Version)
	}
	for name, ok := range map[string]bool{"uptime": sv.Uptime.OK, "used": sv.UsedMemory.OK, "peak": sv.PeakMemory.OK, "ops": sv.OpsPerSec.OK, "clients": sv.Clients.OK, "evicted": sv.Evicted.OK, "expired": sv.Expired.OK} {
		if !ok {
			t.Errorf("%s missing", name)
		}
	}
	if !sv.NotificationsEnabled() {
		t.Fatalf("notifications = %+v", sv.Notifications)
	}

	// A change in Redis shows in the next read.
	db5.Set(ctx, "another", "v", 0)
	ov = r.Read(ctx)
	if ov.DBs[1].Keys != 4 {
		t.Fatalf("after write db5 keys = %d", ov.DBs[1].Keys)
	}
	if len(ov.History) < 2 {
		t.Fatalf("history = %d samples", len(ov.History))
	}
}

// A least-privilege ACL user without INFO or CONFIG gets the same overview
// from DBSIZE and the sweep, with the refused panels explained.
func TestOverviewFallbackForRestrictedUser(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	admin := s.Client(0)
	if err := admin.Do(ctx, "ACL", "SETUSER", "viewer", "on", ">pw", "~*", "+@read", "+@connection", "+select", "-info", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 450 {
		ttl := time.Duration(0)
		if i%3 == 0 {
			ttl = time.Hour
		}
		admin.Set(ctx, "key:"+string(rune('A'+i%26))+":"+strings.Repeat("x", i%7)+":"+strconv.Itoa(i), "v", ttl)
	}
	s.Client(2).Set(ctx, "only", "v", 0)

	r := NewOverviewReader(openConn(t, "redis://viewer:pw@"+s.Addr+"/0"))
	ov := r.Read(ctx)
	if ov.Err != "" {
		t.Fatalf("read error: %s", ov.Err)
	}
	if ov.KeyspaceSource != SourceSweep {
		t.Fatalf("source = %q", ov.KeyspaceSource)
	}
	if len(ov.DBs) != 2 || ov.DBs[0].Keys != 450 || ov.DBs[1].Index != 2 || ov.DBs[1].Keys != 1 {
		t.Fatalf("dbs = %+v", ov.DBs)
	}
	if ov.Server.Version.OK || !strings.Contains(ov.Server.Version.Why, "not permitted") {
		t.Fatalf("version should be refused by ACL, got %+v", ov.Server.Version)
	}
	if ov.Server.Notifications.OK || !strings.Contains(ov.Server.Notifications.Why, "CONFIG GET is not permitted") {
		t.Fatalf("notifications = %+v", ov.Server.Notifications)
	}
	// The sweep converges: after enough ticks db0's expiry count is exact.
	var db0 DBStats
	for range 20 {
		ov = r.Read(ctx)
		db0 = ov.DBs[0]
		if db0.Expires.OK && !db0.Estimated {
			break
		}
	}
	if !db0.Expires.OK || db0.Estimated || db0.Expires.V != 150 {
		t.Fatalf("db0 after sweep = %+v", db0)
	}
	if !db0.AvgTTL.OK || db0.AvgTTL.V < 59*time.Minute {
		t.Fatalf("db0 avg ttl = %+v", db0.AvgTTL)
	}
	// The sweep's SELECTs never leak into the base client's database.
	if n, err := openConn(t, "redis://viewer:pw@"+s.Addr+"/0").Client().DBSize(ctx).Result(); err != nil || n != 450 {
		t.Fatalf("base client DBSIZE = %d, %v", n, err)
	}
}

func TestOverviewServerDown(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	r := NewOverviewReader(c)
	if ov := r.Read(ctx); ov.Err != "" {
		t.Fatal(ov.Err)
	}
	s.Stop()
	ov := r.Read(ctx)
	if ov.Err == "" {
		t.Fatal("read of a stopped server reported no error")
	}
	s.Restart()
	c.Client().Set(ctx, "x", "1", 0)
	ov = r.Read(ctx)
	if ov.Err != "" || len(ov.DBs) != 1 {
		t.Fatalf("after restart: err=%q dbs=%+v", ov.Err, ov.DBs)
	}
}

func TestOverviewOverUnixSocket(t *testing.T) {
	ctx := context.Background()
	sock := t.TempDir() + "/redis.sock"
	s := redistest.Start(t, "--unixsocket", sock, "--unixsocketperm", "700")
	s.Client(2).Set(ctx, "k", "v", 0)
	r := NewOverviewReader(openConn(t, "unix://"+sock+"?db=0"))
	ov := r.Read(ctx)
	if ov.Err != "" || len(ov.DBs) != 1 || ov.DBs[0].Index != 2 {
		t.Fatalf("err=%q dbs=%+v", ov.Err, ov.DBs)
	}
}

// A server with fewer databases than the default 16: a failed SELECT must
// not make the next DBSIZE count the previous database again.
func TestOverviewFallbackFewerDatabases(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t, "--databases", "2")
	admin := s.Client(0)
	if err := admin.Do(ctx, "ACL", "SETUSER", "viewer", "on", ">pw", "~*", "+@read", "+@connection", "+select", "-info", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	s.Client(1).Set(ctx, "only", "v", 0)
	r := NewOverviewReader(openConn(t, "redis://viewer:pw@"+s.Addr+"/0"))
	for range 2 {
		ov := r.Read(ctx)
		if ov.Err != "" || len(ov.DBs) != 1 || ov.DBs[0].Index != 1 || ov.DBs[0].Keys != 1 {
			t.Fatalf("dbs = %+v (err %q)", ov.DBs, ov.Err)
		}
		if ov.Server.Databases != 2 {
			t.Fatalf("databases = %d", ov.Server.Databases)
		}
	}
}
