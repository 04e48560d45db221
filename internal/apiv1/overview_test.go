package apiv1

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

func TestOverviewMapsFiguresAndUnknowns(t *testing.T) {
	ov := stats.Overview{Conn: "eisland", Display: "redis://:xxxxx@127.0.0.1:6379", At: t0, Status: up(), KeyspaceSource: stats.SourceInfo,
		Server: stats.ServerStats{Version: redisview.Some("7.0.15"), Mode: redisview.Some("standalone"), Uptime: redisview.Some(442 * time.Second),
			UsedMemory: redisview.Some[int64](1 << 20), PeakMemory: redisview.Some[int64](2 << 20), MaxMemory: redisview.Some[int64](0),
			OpsPerSec: redisview.Pending[float64]("needs a second read"), OwnOpsPerSec: redisview.Some(4.5), TotalOpsPerSec: redisview.Some(13247.0),
			Clients: redisview.Some[int64](7), HitRatio: redisview.Some(0.75), Hits: 3, Misses: 1,
			Evicted: redisview.None[int64]("not reported"), Expired: redisview.Some[int64](0),
			Notifications: redisview.None[string]("CONFIG GET refused"), Databases: 16},
		DBs:     []stats.DBStats{{Index: 4, Keys: 100, Expires: redisview.Some[int64](90), AvgTTL: redisview.Some(time.Minute), Coverage: 1}, {Index: 9, Keys: 3, Coverage: 0.5, Estimated: true}},
		History: []stats.Sample{{At: t0, OpsPerSec: 3, HasOps: true}},
	}
	known := func(db int) (stats.DBDetail, bool) {
		return stats.DBDetail{ViolCount: 2, CompletedAt: t0}, db == 4
	}
	page := Overview(ov, matched(pack(t, "eisland")), known)
	s := page.Server
	if *s.UptimeMs != 442000 || s.OpsPerSec != nil || *s.TotalOpsPerSec != 13247 || s.Evicted != nil || *s.Expired != 0 || *s.MaxMemory != 0 {
		t.Errorf("server %+v", s)
	}
	if s.Events.State != EventsUnknown || s.Events.Flags != nil || s.Events.Why == "" {
		t.Errorf("events %+v: unknown, not disabled", s.Events)
	}
	un := map[string]Unavailable{}
	for _, u := range page.Unavailable {
		un[u.Field] = u
	}
	if !un["ops_per_sec"].Pending || un["evicted_keys"].Pending || un["evicted_keys"].Why != "not reported" || un["keyspace_events"].Why == "" {
		t.Errorf("unavailable %+v", page.Unavailable)
	}
	ks := page.Keyspace
	if ks.TotalKeys != 103 || *ks.Databases[0].AvgTTLMs != 60000 || *ks.Databases[0].Violations != 2 || ks.Databases[1].Violations != nil || ks.Databases[1].Expires != nil {
		t.Errorf("keyspace %+v", ks)
	}
	has(t, page, `"uptime_ms":442000`, `"hit_ratio":0.75`, `"expired_keys":0`, `"coverage":0.5`, `"ops_per_sec":3`, `"at":"2026-12-01T20:00:00Z"`)
	hasNot(t, page, append([]string{`"evicted_keys":`}, displayStrings...)...)
	conforms(t, page)
}

func TestOverviewFailedRead(t *testing.T) {
	ov := stats.Overview{Conn: "x", Err: "Redis not reachable: dial tcp", Status: redisview.Status{Checked: t0, Since: t0}}
	page := Overview(ov, redisview.PackChoice{}, nil)
	if page.Server != nil || page.Keyspace != nil || page.Redis.State != RedisDown || page.Error == "" {
		t.Errorf("failed read %+v", page)
	}
	has(t, page, `"history":[]`, `"unavailable":[]`)
	conforms(t, page)

	ov = stats.Overview{Conn: "x", At: t0, Status: up(), Server: stats.ServerStats{Notifications: redisview.Some("")}}
	page = Overview(ov, redisview.PackChoice{}, nil)
	if page.Server.Events.State != EventsDisabled || *page.Server.Events.Flags != "" {
		t.Errorf("disabled events %+v", page.Server.Events)
	}
	has(t, page, `"databases":[]`)
	conforms(t, page)
}
