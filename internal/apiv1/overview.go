package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// OverviewPage mirrors a connection's overview page (handlers/overview.go):
// the server's figures, the keys of each database and recent samples.
// Meant for GET /api/v1/connections/{conn}/overview.
type OverviewPage struct {
	Conn     string            `json:"conn" doc:"The connection's name." example:"eisland"`
	Display  string            `json:"display" doc:"The connection's URL, its password hidden."`
	ReadAt   *time.Time        `json:"read_at,omitempty" doc:"When the figures were read; absent before the first read."`
	Redis    RedisState        `json:"redis" doc:"Whether the server answers."`
	Pack     PackState         `json:"pack" doc:"The schema pack that explains the keys."`
	Error    string            `json:"error,omitempty" doc:"Why this read failed; server and keyspace are then absent."`
	Server   *ServerInfo       `json:"server,omitempty" doc:"Server-wide figures; absent when the read failed."`
	Keyspace *OverviewKeyspace `json:"keyspace,omitempty" doc:"Keys per database; absent when the read failed."`
	History  []OverviewSample  `json:"history" nullable:"false" doc:"Recent samples, oldest first (up to five minutes)."`
	// Unavailable lists the figures the server would not give and why: a
	// figure absent from server is listed here, never sent as 0.
	Unavailable []Unavailable `json:"unavailable" nullable:"false" doc:"The server figures that are absent, and why (a figure not known yet is pending)."`
	// Nodes, Sentinel and Headroom: the deployment's nodes (on a cluster,
	// server and keyspace sum the primaries that answered: nodes.covers).
	Nodes    *ClusterNodes  `json:"nodes,omitempty" doc:"A cluster's nodes, slots and state; absent on other connections and when the read failed."`
	Sentinel *SentinelState `json:"sentinel,omitempty" doc:"A sentinel connection's primary, replicas, sentinels and last failover; absent on other connections."`
	Headroom []Headroom     `json:"headroom" nullable:"false" doc:"Each primary's (a standalone server's) maxmemory-policy, memory headroom and keys; empty when the read failed."`
}

// Unavailable is one figure that is not known.
type Unavailable struct {
	Field   string `json:"field" doc:"The field of server that is absent." example:"hit_ratio"`
	Why     string `json:"why" doc:"Why: the server does not report it, or refused the command."`
	Pending bool   `json:"pending" doc:"It will come (a rate needs a second read); false: this server never gives it."`
}

// ServerInfo is the server's figures; a field is absent when it is not
// known (see unavailable).
type ServerInfo struct {
	Version        *string  `json:"version,omitempty" example:"7.0.15"`
	Mode           *string  `json:"mode,omitempty" example:"standalone"`
	UptimeMs       *int64   `json:"uptime_ms,omitempty" minimum:"0"`
	UsedMemory     *int64   `json:"used_memory_bytes,omitempty" minimum:"0"`
	PeakMemory     *int64   `json:"peak_memory_bytes,omitempty" minimum:"0"`
	MaxMemory      *int64   `json:"max_memory_bytes,omitempty" minimum:"0" doc:"0: no limit."`
	OpsPerSec      *float64 `json:"ops_per_sec,omitempty" minimum:"0" doc:"The applications' commands per second since the previous read, Keydeck's own left out."`
	OwnOpsPerSec   *float64 `json:"own_ops_per_sec,omitempty" minimum:"0" doc:"Keydeck's own commands per second on this server."`
	TotalOpsPerSec *float64 `json:"total_ops_per_sec,omitempty" minimum:"0" doc:"Every client's commands per second, Keydeck's included."`
	OpsApprox      bool     `json:"ops_approx" doc:"ops_per_sec subtracts counters not read at one moment: close, not exact."`
	OpsEstimated   bool     `json:"ops_estimated" doc:"The server reports no instantaneous rate: the rates are Keydeck's, from command counts."`
	Clients        *int64   `json:"clients,omitempty" minimum:"0"`
	HitRatio       *float64 `json:"hit_ratio,omitempty" minimum:"0" maximum:"1"`
	Hits           int64    `json:"hits" minimum:"0"`
	Misses         int64    `json:"misses" minimum:"0"`
	Evicted        *int64   `json:"evicted_keys,omitempty" minimum:"0"`
	Expired        *int64   `json:"expired_keys,omitempty" minimum:"0"`
	Databases      int      `json:"databases" minimum:"0" doc:"Databases the server has."`
	Events         Events   `json:"keyspace_events" doc:"Keyspace notifications, which live views follow instead of polling."`
}

// Keyspace event states.
const (
	EventsUnknown    = "unknown"
	EventsDisabled   = "disabled"
	EventsNoK        = "not_used"
	EventsOn         = "enabled"
	EventsSubscribed = "subscribed"
)

// Events is whether the server publishes keyspace events and Keydeck
// follows them.
type Events struct {
	State string     `json:"state" enum:"unknown,disabled,not_used,enabled,subscribed" doc:"unknown: the flags could not be read (CONFIG refused; not the same as disabled); disabled; not_used: on, but without K events, which Keydeck follows; enabled: K events on, Keydeck not subscribed yet; subscribed: live views use them."`
	Flags *string    `json:"flags,omitempty" doc:"notify-keyspace-events as read; absent when unknown." example:"KEA"`
	Why   string     `json:"why,omitempty" doc:"Why the flags are unknown."`
	Since *time.Time `json:"since,omitempty" doc:"Subscribed since."`
}

// OverviewKeyspace is the keys of each database that holds some.
type OverviewKeyspace struct {
	Source    string       `json:"source" doc:"Where the figures come from: INFO keyspace, or DBSIZE and Keydeck's own TTL sweep." example:"INFO keyspace"`
	TotalKeys int64        `json:"total_keys" minimum:"0"`
	Databases []OverviewDB `json:"databases" nullable:"false" doc:"Databases holding keys, by index."`
}

// OverviewDB is one database of the overview.
type OverviewDB struct {
	DB        int     `json:"db" minimum:"0"`
	Keys      int64   `json:"keys" minimum:"0"`
	Expires   *int64  `json:"expires,omitempty" minimum:"0" doc:"Keys with a TTL; absent when not known."`
	AvgTTLMs  *int64  `json:"avg_ttl_ms,omitempty" minimum:"0" doc:"Average TTL of those keys; absent when not known."`
	Estimated bool    `json:"estimated" doc:"expires and avg_ttl_ms come from a partial sweep (coverage)."`
	Coverage  float64 `json:"coverage" minimum:"0" maximum:"1" doc:"Share of keys read (1 when exact or from INFO)."`
	// Violations is from the database's last completed statistics pass.
	Violations   *int64     `json:"violations,omitempty" minimum:"0" doc:"Keys breaking their family's rules at the last completed statistics pass; absent when the database has not been swept."`
	ViolationsAt *time.Time `json:"violations_at,omitempty" doc:"When that pass completed."`
}

// OverviewSample is one point of the sparklines.
type OverviewSample struct {
	At         time.Time `json:"at"`
	OpsPerSec  *float64  `json:"ops_per_sec,omitempty" minimum:"0" doc:"Absent when not known at that point."`
	UsedMemory *int64    `json:"used_memory_bytes,omitempty" minimum:"0" doc:"Absent when not known at that point."`
}

// Overview maps a connection's overview (stats.OverviewReader) with its
// pack choice; known is the statistics sweepers' last completed pass of a
// database (Sweepers.Known), nil when there are no sweepers.
func Overview(ov stats.Overview, pc redisview.PackChoice, known func(db int) (stats.DBDetail, bool)) OverviewPage {
	p := OverviewPage{Conn: ov.Conn, Display: ov.Display, ReadAt: timePtr(ov.At), Redis: redisState(ov.Status), Pack: packState(pc),
		Error: ov.Err, History: make([]OverviewSample, 0, len(ov.History)), Unavailable: []Unavailable{},
		Sentinel: sentinelState(ov.Sentinel), Headroom: headrooms(ov.Headroom, pc), Nodes: clusterNodes(ov.Cluster)}
	if ov.Err != "" {
		return p
	}
	p.Server = serverInfo(ov.Server, &p.Unavailable)
	p.Keyspace = &OverviewKeyspace{Source: ov.KeyspaceSource, Databases: make([]OverviewDB, 0, len(ov.DBs))}
	for _, db := range ov.DBs {
		p.Keyspace.TotalKeys += db.Keys
		o := OverviewDB{DB: db.Index, Keys: db.Keys, Expires: opt(db.Expires, "", nil), Estimated: db.Estimated, Coverage: db.Coverage}
		if db.AvgTTL.OK {
			o.AvgTTLMs = ptr(Millis(db.AvgTTL.V))
		}
		if known != nil {
			if d, ok := known(db.Index); ok {
				o.Violations, o.ViolationsAt = ptr(d.ViolCount), timePtr(d.CompletedAt)
			}
		}
		p.Keyspace.Databases = append(p.Keyspace.Databases, o)
	}
	for _, s := range ov.History {
		p.History = append(p.History, OverviewSample{At: Time(s.At), OpsPerSec: optional2(s.OpsPerSec, s.HasOps), UsedMemory: optional(s.UsedMemory, s.HasMemory)})
	}
	return p
}

func optional2(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// opt is o's value, or nil; an unknown value of a named field is listed
// in un.
func opt[T any](o redisview.Opt[T], field string, un *[]Unavailable) *T {
	if o.OK {
		return ptr(o.V)
	}
	if un != nil {
		*un = append(*un, Unavailable{Field: field, Why: o.Why, Pending: o.Pending})
	}
	return nil
}

func serverInfo(s stats.ServerStats, un *[]Unavailable) *ServerInfo {
	v := &ServerInfo{Version: opt(s.Version, "version", un), Mode: opt(s.Mode, "mode", un), UsedMemory: opt(s.UsedMemory, "used_memory_bytes", un),
		PeakMemory: opt(s.PeakMemory, "peak_memory_bytes", un), MaxMemory: opt(s.MaxMemory, "max_memory_bytes", un),
		OpsPerSec: opt(s.OpsPerSec, "ops_per_sec", un), OwnOpsPerSec: opt(s.OwnOpsPerSec, "own_ops_per_sec", un),
		TotalOpsPerSec: opt(s.TotalOpsPerSec, "total_ops_per_sec", un), OpsApprox: s.OpsApprox, OpsEstimated: s.OpsEstimated,
		Clients: opt(s.Clients, "clients", un), HitRatio: opt(s.HitRatio, "hit_ratio", un), Hits: s.Hits, Misses: s.Misses,
		Evicted: opt(s.Evicted, "evicted_keys", un), Expired: opt(s.Expired, "expired_keys", un), Databases: s.Databases}
	if s.Uptime.OK {
		v.UptimeMs = ptr(Millis(s.Uptime.V))
	} else {
		*un = append(*un, Unavailable{Field: "uptime_ms", Why: s.Uptime.Why, Pending: s.Uptime.Pending})
	}
	switch {
	case !s.Notifications.OK:
		v.Events = Events{State: EventsUnknown, Why: s.Notifications.Why}
		*un = append(*un, Unavailable{Field: "keyspace_events", Why: s.Notifications.Why, Pending: s.Notifications.Pending})
	case s.KeyspaceEventsOn() && s.Keyspace.Subscribed:
		v.Events = Events{State: EventsSubscribed, Flags: ptr(s.Notifications.V), Since: timePtr(s.Keyspace.Since)}
	case s.KeyspaceEventsOn():
		v.Events = Events{State: EventsOn, Flags: ptr(s.Notifications.V)}
	case s.NotificationsEnabled():
		v.Events = Events{State: EventsNoK, Flags: ptr(s.Notifications.V)}
	default:
		v.Events = Events{State: EventsDisabled, Flags: ptr(s.Notifications.V)}
	}
	return v
}
