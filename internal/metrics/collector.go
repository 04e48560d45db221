// Package metrics is Keydeck's Prometheus exposition of what the data
// means: per connection, database, family or list — never per key or per
// user — the figures the console's workers already hold in memory (the
// statistics sweeps, the limit sweeps, the quota walks, the bans health
// refresh, the connection monitors, the live hub and the action runner).
//
// A scrape sends no Redis command: Collect only copies in-memory state.
// What no worker has read yet is absent from the exposition, not 0.
package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/stats"
)

// Conns lists the watched connections (redisview.Registry).
type Conns interface{ All() []*redisview.Conn }

// Sweeps is what the statistics sweepers hold (stats.Sweepers).
type Sweeps interface{ Held() []stats.Held }

// LimitSweeps is what the limit sweeps hold (limits.Pool).
type LimitSweeps interface {
	Snapshots() map[string]limits.Snapshot
}

// QuotaWalks is what the quota walkers hold (quotas.Walkers).
type QuotaWalks interface{ Snapshots() []quotas.Snapshot }

// Hub is the live hub (live.Hub).
type Hub interface{ Stats() live.Stats }

// Actions is the action runner (action.Runner).
type Actions interface {
	Tally() map[action.KindOutcome]int64
}

// Sources are the workers a scrape reads. A nil source's series are
// absent.
type Sources struct {
	Conns   Conns
	Sweeps  Sweeps
	Limits  LimitSweeps
	Quotas  QuotaWalks
	Bans    *BanHealth
	Hub     Hub
	Actions Actions
	// Now is the clock ages are measured with (default time.Now).
	Now func() time.Time
}

// Collector is a prometheus.Collector over Sources.
type Collector struct{ src Sources }

// New returns the collector of src.
func New(src Sources) *Collector {
	if src.Now == nil {
		src.Now = time.Now
	}
	return &Collector{src: src}
}

// Describe sends every series' description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect copies what the workers hold; it sends no Redis command.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	now := c.src.Now()
	e := emitter{ch: ch}
	if c.src.Conns != nil {
		collectConns(e, c.src.Conns.All())
	}
	if c.src.Sweeps != nil {
		collectSweeps(e, c.src.Sweeps.Held(), now)
	}
	if c.src.Limits != nil {
		collectLimits(e, c.src.Limits.Snapshots(), now)
	}
	if c.src.Quotas != nil {
		collectQuotas(e, c.src.Quotas.Snapshots())
	}
	if c.src.Bans != nil {
		collectBans(e, c.src.Bans.Held(), now)
	}
	if c.src.Hub != nil {
		collectHub(e, c.src.Hub.Stats())
	}
	if c.src.Actions != nil {
		for k, n := range c.src.Actions.Tally() {
			e.counter(actionsTotal, float64(n), k.Kind, k.Outcome)
		}
	}
}

// emitter sends const metrics; label values come from bounded sets only
// (connection names, database numbers, family and list ids of the packs,
// action kinds and outcomes).
type emitter struct{ ch chan<- prometheus.Metric }

func (e emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func (e emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

func db(n int) string { return strconv.Itoa(n) }

func collectConns(e emitter, conns []*redisview.Conn) {
	for _, c := range conns {
		if st := c.Status(); !st.Checked.IsZero() {
			e.gauge(redisUp, boolValue(st.Up), c.Name)
		}
		e.counter(ownCommands, float64(c.OwnCount().Done), c.Name)
	}
}

func collectHub(e emitter, st live.Stats) {
	viewers := 0
	for _, n := range st.Subscribers {
		viewers += n
	}
	e.gauge(liveViewers, float64(viewers))
	e.gauge(liveTopics, float64(len(st.Subscribers)))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
