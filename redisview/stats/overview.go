package stats

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// Overview is one connection's server and per-database statistics at one moment.
type Overview struct {
	Conn    string
	Display string
	At      time.Time
	Status  redisview.Status
	Err     string // why this read failed; the rest is then empty

	Server ServerStats
	// DBs lists every database that holds keys, by index.
	DBs []DBStats
	// Databases is how many databases may be chosen: 1 on a cluster
	// (database 0 only), 0 where the server decides (Topology).
	Databases int
	// KeyspaceSource says where per-database numbers came from.
	KeyspaceSource string
	// History holds recent samples for sparklines, oldest first.
	History []Sample
	// Trend is the last hour of the same reads, in TrendStep bins,
	// oldest first.
	Trend []TrendSample
	// Cluster is a cluster's nodes and slots (nil on other connections).
	Cluster *ClusterStats
	// Headroom is each primary's memory and keys before it evicts (one
	// line on a standalone server).
	Headroom []Headroom
	// Sentinel is a sentinel connection's primary, replicas and sentinels
	// (nil on other connections).
	Sentinel *SentinelStats
}

// ServerStats are the server-wide numbers of the overview.
type ServerStats struct {
	Version    redisview.Opt[string]
	Mode       redisview.Opt[string]
	Uptime     redisview.Opt[time.Duration]
	UsedMemory redisview.Opt[int64]
	PeakMemory redisview.Opt[int64]
	MaxMemory  redisview.Opt[int64]
	// OpsPerSec is the applications' command rate: what the server ran
	// per second since the previous read, without Keydeck's own commands
	// (OwnOpsPerSec); never negative.
	OpsPerSec redisview.Opt[float64]
	// OwnOpsPerSec is Keydeck's own command rate on this server over the
	// same interval: its sweeps, polls, probes and this very read.
	OwnOpsPerSec redisview.Opt[float64]
	// TotalOpsPerSec is every client's rate, Keydeck's included.
	TotalOpsPerSec redisview.Opt[float64]
	// OpsApprox: OpsPerSec subtracts two counters that were not read at
	// the same moment (Keydeck had other commands in flight when the
	// server read its own, or ran scripts whose inner commands it could
	// not count), so it is close but not exact.
	OpsApprox bool
	// OpsEstimated: the server reports no instantaneous_ops_per_sec; every
	// rate is Keydeck's, from command-count deltas.
	OpsEstimated  bool
	Clients       redisview.Opt[int64]
	HitRatio      redisview.Opt[float64]
	Hits, Misses  int64
	Evicted       redisview.Opt[int64]
	Expired       redisview.Opt[int64]
	Notifications redisview.Opt[string] // notify-keyspace-events flags, "" = disabled
	// Keyspace is whether Keydeck is subscribed to keyspace events now
	// (the flags may be on before its watcher has noticed).
	Keyspace  redisview.KeyspaceState
	Databases int // how many databases the server has
}

// DBStats describes one database.
type DBStats struct {
	Index   int
	Keys    int64
	Expires redisview.Opt[int64]
	AvgTTL  redisview.Opt[time.Duration]
	// Estimated is true when Expires/AvgTTL come from a partial sweep.
	Estimated bool
	// Coverage is the share of keys the sweep has read (1 when exact or from INFO).
	Coverage float64
}

// Sample is one point of the sparklines.
type Sample struct {
	At         time.Time
	OpsPerSec  float64
	UsedMemory int64
	HasOps     bool
	HasMemory  bool
}

// NotificationsEnabled reports whether keyspace notifications reach subscribers.
func (s ServerStats) NotificationsEnabled() bool {
	if !s.Notifications.OK {
		return false
	}
	f := s.Notifications.V
	return strings.ContainsAny(f, "KE") && f != ""
}

// KeyspaceEventsOn reports whether the server publishes the keyspace (K)
// events Keydeck's live views follow.
func (s ServerStats) KeyspaceEventsOn() bool {
	return s.Notifications.OK && strings.Contains(s.Notifications.V, "K")
}

const (
	historyLen = 300 // five minutes at the default one-second poll
	sweepCount = 200 // SCAN COUNT per tick of the fallback TTL sweep
)

// Sources of per-database numbers.
const (
	SourceInfo  = "INFO keyspace"
	SourceSweep = "DBSIZE and Keydeck's own TTL sweep"
)

// OverviewReader reads a connection's overview. It keeps what must survive
// between ticks: detected capabilities, the fallback sweep and sparkline
// history. One reader serves one poller; Read is not called concurrently,
// but the mutex keeps a stray concurrent call safe.
type OverviewReader struct {
	conn *redisview.Conn
	now  func() time.Time

	mu        sync.Mutex
	fallback  bool // the server's INFO has no keyspace section
	databases int
	prevOps   opsPoint // the counters at the previous read
	history   []Sample
	trend     trend
	sweep     ttlSweep
	lastSizes map[int]int64      // DBSIZE of the previous fallback tick
	last      Overview           // the latest read, for pages opened meanwhile
	nodeOps   map[string]nodeOps // a cluster's command counters by node ID
	// policyByConfig: the server's INFO has no maxmemory_policy (before
	// Redis 4): CONFIG GET maxmemory-policy reads it.
	policyByConfig bool
	policyCfg      redisview.Opt[string] // what it read
	// A sentinel connection's primary at the last read, and the last
	// change of primary seen.
	primary  string
	failover *Failover
}

// NewOverviewReader makes a reader for c.
func NewOverviewReader(c *redisview.Conn) *OverviewReader {
	return &OverviewReader{conn: c, now: time.Now, databases: redisview.DefaultDatabases}
}

// Read takes one overview. On a reachable server it costs one pipelined round
// trip; only the very first read of a server without INFO keyspace costs two,
// because that is when the fallback is discovered.
func (r *OverviewReader) Read(ctx context.Context) Overview {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.conn
	ov := Overview{Conn: c.Name, Display: c.Display, Status: c.Status(), Databases: c.Topology().Databases}
	if c.IsCluster() {
		if err := r.readCluster(ctx, &ov); err != nil {
			ov.At = r.now()
			ov.Err = c.SafeErr(err)
			r.snapshot(&ov)
			return ov
		}
		r.remember(ov)
		r.snapshot(&ov)
		r.last = ov
		return ov
	}

	var (
		info  Info
		infoE error
		notif redisview.Opt[string]
		sizes map[int]int64
		err   error
		mark  redisview.OwnMark // Keydeck's count when the server read its own
	)
	if !r.fallback {
		mark = redisview.OwnMark{}
		info, infoE, notif, err = r.readInfo(redisview.WithOwnMark(ctx, &mark))
		if err == nil && (infoE != nil || !info.Has("keyspace")) {
			r.fallback = true
		}
	}
	if err == nil && r.fallback {
		mark = redisview.OwnMark{}
		info, infoE, notif, sizes, err = r.readFallback(redisview.WithOwnMark(ctx, &mark))
	}
	if c.Topology().Kind == redisview.Sentinel {
		// Even when the primary cannot be read: the sentinels say why.
		r.readSentinel(ctx, &ov)
	}
	ov.At = r.now()
	if err != nil {
		ov.Err = c.SafeErr(err)
		r.snapshot(&ov)
		return ov
	}
	ov.Server = r.serverStats(info, infoE, notif)
	ov.Server.Keyspace = c.Keyspace()
	r.opsStats(&ov.Server, info, infoE, &mark, ov.At)
	ov.Server.Databases = r.databases
	if r.fallback {
		ov.KeyspaceSource = SourceSweep
		ov.DBs = r.sweep.stats(sizes, r.databases)
	} else {
		ov.KeyspaceSource = SourceInfo
		ov.DBs = keyspaceStats(info)
	}
	ov.Headroom = []Headroom{r.headroom(info, infoE, ov)}
	r.remember(ov)
	r.snapshot(&ov)
	r.last = ov
	return ov
}

// headroom is a standalone server's memory and keys before it evicts.
func (r *OverviewReader) headroom(info Info, infoErr error, ov Overview) Headroom {
	h := Headroom{Used: ov.Server.UsedMemory, Max: ov.Server.MaxMemory}
	var keys int64
	for _, db := range ov.DBs {
		keys += db.Keys
	}
	h.Keys = redisview.Some(keys)
	switch {
	case infoErr != nil:
		h.Policy = redisview.None[string]("not readable: " + redisview.Refusal("INFO", infoErr))
	case r.policyByConfig && (r.policyCfg.OK || r.policyCfg.Why != ""):
		h.Policy = r.policyCfg
	default:
		h.Policy = policyOf(info)
		if !h.Policy.OK && !r.policyByConfig {
			// Before Redis 4: CONFIG GET from the next read on.
			r.policyByConfig = true
			h.Policy = redisview.Pending[string]("reading CONFIG GET maxmemory-policy…")
		}
	}
	return h
}

// configPolicy is CONFIG GET maxmemory-policy's answer; a refusal is said,
// never guessed.
func configPolicy(cmd *redis.MapStringStringCmd) redisview.Opt[string] {
	m, err := cmd.Result()
	if err != nil {
		return redisview.None[string]("not readable: " + redisview.Refusal("CONFIG GET", err))
	}
	if v, ok := m["maxmemory-policy"]; ok {
		return redisview.Some(v)
	}
	return redisview.None[string]("not readable: the server did not report maxmemory-policy")
}

// minRateInterval is the shortest interval Latest measures rates over.
const minRateInterval = 250 * time.Millisecond

// Latest returns the poller's last overview if it is at most maxAge old, so
// a page load need not read the server (and disturb the sweep and the
// sparklines' spacing) while a poller is running; otherwise it reads.
func (r *OverviewReader) Latest(ctx context.Context, maxAge time.Duration) Overview {
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	// Rates need a second read: a first one that left them measuring is
	// not worth serving once a second one can say more.
	if last.Server.OpsPerSec.Pending && r.now().Sub(last.At) >= minRateInterval {
		maxAge = 0
	}
	if !last.At.IsZero() && last.Err == "" && r.now().Sub(last.At) <= maxAge {
		last.Status = r.conn.Status()
		return last
	}
	return r.Read(ctx)
}

// readInfo is the normal path: INFO and the notification flags in one round trip.
func (r *OverviewReader) readInfo(ctx context.Context) (Info, error, redisview.Opt[string], error) {
	p := r.conn.Client().Pipeline()
	infoCmd := p.Info(ctx)
	cfgCmd := p.ConfigGet(ctx, "notify-keyspace-events")
	var policyCmd *redis.MapStringStringCmd
	if r.policyByConfig {
		policyCmd = p.ConfigGet(ctx, "maxmemory-policy")
	}
	_, err := p.Exec(ctx)
	if redisview.IsConnErr(err) {
		return nil, nil, redisview.Opt[string]{}, err
	}
	info, infoErr := parseInfoCmd(infoCmd)
	r.policyCfg = redisview.Opt[string]{}
	if policyCmd != nil {
		r.policyCfg = configPolicy(policyCmd)
	}
	return info, infoErr, notificationFlags(cfgCmd), nil
}

// readFallback serves servers whose INFO lacks keyspace (embedded Redis,
// some proxies, ACL users without INFO): DBSIZE for every database plus
// one step of the TTL sweep, all in one pipeline.
func (r *OverviewReader) readFallback(ctx context.Context) (Info, error, redisview.Opt[string], map[int]int64, error) {
	p := r.conn.CrossDBPipeline()
	infoCmd := p.Info(ctx)
	cfgCmd := p.ConfigGet(ctx, "notify-keyspace-events")
	sizeCmds := make([]*redis.IntCmd, r.databases)
	selects := make([]*redis.StatusCmd, r.databases)
	for i := range sizeCmds {
		selects[i] = p.Select(ctx, i)
		sizeCmds[i] = p.DBSize(ctx)
	}
	steps := r.sweep.queue(ctx, p, r.lastSizes, r.databases)
	_, err := p.Exec(ctx)
	if redisview.IsConnErr(err) {
		r.sweep.abort(steps)
		return nil, nil, redisview.Opt[string]{}, nil, err
	}
	sizes := map[int]int64{}
	for i, cmd := range sizeCmds {
		// A failed SELECT leaves the connection on the previous database:
		// its DBSIZE would count that one again.
		if err := selects[i].Err(); err != nil {
			if redisview.IsOutOfRange(err) {
				r.databases = i // the server has fewer databases
			}
			break
		}
		if n, err := cmd.Result(); err == nil {
			sizes[i] = n
		}
	}
	r.sweep.absorb(steps)
	r.lastSizes = sizes
	info, infoErr := parseInfoCmd(infoCmd)
	return info, infoErr, notificationFlags(cfgCmd), sizes, nil
}

func parseInfoCmd(cmd *redis.StringCmd) (Info, error) {
	txt, err := cmd.Result()
	if err != nil {
		return Info{}, err
	}
	return ParseInfo(txt), nil
}

func notificationFlags(cmd *redis.MapStringStringCmd) redisview.Opt[string] {
	m, err := cmd.Result()
	if err != nil {
		return redisview.None[string](redisview.Refusal("CONFIG GET", err))
	}
	v, ok := m["notify-keyspace-events"]
	if !ok {
		return redisview.None[string]("the server did not report notify-keyspace-events")
	}
	return redisview.Some(v)
}

func (r *OverviewReader) serverStats(info Info, infoErr error, notif redisview.Opt[string]) ServerStats {
	s := ServerStats{Notifications: notif}
	missing := func(section string) string {
		if infoErr != nil {
			return redisview.Refusal("INFO", infoErr)
		}
		if info.Has(section) {
			return "not in this server's INFO " + section + " section"
		}
		return "this server's INFO has no " + section + " section"
	}
	str := func(field, section string) redisview.Opt[string] {
		if v, ok := info.Get(field); ok {
			return redisview.Some(v)
		}
		return redisview.None[string](missing(section))
	}
	num := func(field, section string) redisview.Opt[int64] {
		if v, ok := info.Int(field); ok {
			return redisview.Some(v)
		}
		return redisview.None[int64](missing(section))
	}
	s.Version = str("redis_version", "server")
	s.Mode = str("redis_mode", "server")
	if v, ok := info.Int("uptime_in_seconds"); ok {
		s.Uptime = redisview.Some(time.Duration(v) * time.Second)
	} else {
		s.Uptime = redisview.None[time.Duration](missing("server"))
	}
	s.UsedMemory = num("used_memory", "memory")
	s.PeakMemory = num("used_memory_peak", "memory")
	s.MaxMemory = num("maxmemory", "memory")
	s.Clients = num("connected_clients", "clients")
	s.Evicted = num("evicted_keys", "stats")
	s.Expired = num("expired_keys", "stats")

	hits, okH := info.Int("keyspace_hits")
	misses, okM := info.Int("keyspace_misses")
	switch {
	case !okH || !okM:
		s.HitRatio = redisview.None[float64](missing("stats"))
	case hits+misses == 0:
		s.HitRatio = redisview.Pending[float64]("no key lookups yet")
	default:
		s.Hits, s.Misses = hits, misses
		s.HitRatio = redisview.Some(float64(hits) / float64(hits+misses))
	}
	return s
}

// keyspaceStats converts INFO keyspace into per-database stats.
func keyspaceStats(info Info) []DBStats {
	ks := info.Keyspace()
	out := make([]DBStats, 0, len(ks))
	for idx := 0; len(out) < len(ks); idx++ {
		db, ok := ks[idx]
		if !ok {
			if idx > 1<<16 { // malformed indexes; never loop forever
				break
			}
			continue
		}
		s := DBStats{Index: idx, Keys: db.Keys, Expires: redisview.Some(db.Expires), Coverage: 1}
		switch {
		case db.Expires > 0 && db.AvgTTL > 0:
			s.AvgTTL = redisview.Some(db.AvgTTL)
		case db.Expires > 0:
			// Redis estimates avg_ttl in its expire cycle; 0 means "not yet".
			s.AvgTTL = redisview.Pending[time.Duration]("not estimated by the server yet")
		default:
			s.AvgTTL = redisview.None[time.Duration]("no keys with expiry")
		}
		out = append(out, s)
	}
	return out
}

func (r *OverviewReader) remember(ov Overview) {
	s := Sample{At: ov.At}
	if ov.Server.OpsPerSec.OK {
		s.OpsPerSec, s.HasOps = ov.Server.OpsPerSec.V, true
	}
	if ov.Server.UsedMemory.OK {
		s.UsedMemory, s.HasMemory = ov.Server.UsedMemory.V, true
	}
	r.history = append(r.history, s)
	r.trend.add(s, ov.DBs)
	if len(r.history) > historyLen {
		r.history = append(r.history[:0], r.history[len(r.history)-historyLen:]...)
	}
}

// snapshot gives an overview copies of the history and the hour.
func (r *OverviewReader) snapshot(ov *Overview) {
	ov.History = append([]Sample(nil), r.history...)
	ov.Trend = r.trend.samples()
}
