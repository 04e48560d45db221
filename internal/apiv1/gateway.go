package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
)

// GatewayKeyPage mirrors the gateway key page (handlers/gatewaykey.go):
// one API key's rps bucket, this and last period's budget, its requests
// in flight with their reservations, and the breaker hints. An id with no
// key in Redis is state "absent", not an error: the gateway writes a
// key's keys only while it is used. Meant for
// GET /api/v1/connections/{conn}/gateway-key?id=ID.
type GatewayKeyPage struct {
	Conn   string     `json:"conn" doc:"The connection's name." example:"gateway"`
	ID     Name       `json:"id" doc:"The API key id asked about."`
	Redis  RedisState `json:"redis" doc:"Whether the server answers; when down nothing is known about the key."`
	State  string     `json:"state" enum:"not_read,absent,present" doc:"not_read: the key's state could not be read (see error, or redis down); absent: no key of the id exists now (an unknown id looks the same); present."`
	ReadAt *time.Time `json:"read_at,omitempty" doc:"When the key's state was read; absent when not read."`
	Error  string     `json:"error,omitempty" doc:"Why the state could not be read."`

	Bucket       *GatewayBucket       `json:"bucket,omitempty" doc:"The rps bucket; absent when not read or the pack has none."`
	Budgets      []GatewayBudget      `json:"budgets" nullable:"false" doc:"The budget of this period, then of the last."`
	InFlight     *QuotaRow            `json:"in_flight,omitempty" doc:"The concurrency set of requests in flight (gone: none); absent when not read."`
	Reservations []GatewayReservation `json:"reservations" nullable:"false" doc:"The reservation of each request in flight (at most 50), oldest first."`
	Hints        GatewayHints         `json:"breaker_hints" doc:"Every current breaker hint: Redis keeps no key-to-route mapping."`
}

// GatewayBucket is an API key's rps token bucket.
type GatewayBucket struct {
	Key          Name     `json:"key"`
	Exists       bool     `json:"exists" doc:"false: no bucket in Redis (not used within its TTL): a first request finds it full."`
	Capacity     *float64 `json:"capacity,omitempty" minimum:"0" doc:"From the pack; absent when it gives none."`
	RefillPerSec *float64 `json:"refill_per_sec,omitempty" minimum:"0" doc:"From the pack; absent when it gives none."`
	Tokens       *float64 `json:"tokens,omitempty" minimum:"0" doc:"Tokens now (refilled since the write); a full bucket when it does not exist; absent when unreadable (see error)."`
	TTLMs        *int64   `json:"ttl_ms,omitempty" doc:"-1: none; absent when it does not exist."`
	ToFullMs     *int64   `json:"to_full_ms,omitempty" minimum:"0" doc:"Until the bucket is full (0: full now); absent when it does not exist."`
	Throttled    bool     `json:"throttled" doc:"The next request is refused."`
	RetryAfterMs *int64   `json:"retry_after_ms,omitempty" minimum:"0" doc:"When throttled: until enough tokens are back."`
	Error        string   `json:"error,omitempty" doc:"Why the bucket could not be decoded."`
}

// GatewayBudget is the key's budget of one period.
type GatewayBudget struct {
	Period  string   `json:"period" doc:"The period its key names." example:"202612"`
	Current bool     `json:"current" doc:"This period (false: the last one)."`
	Row     QuotaRow `json:"row" doc:"The budget's key (gone: not written this period)."`
}

// GatewayReservation is one request in flight and its reservation.
type GatewayReservation struct {
	Request Name     `json:"request" doc:"The request id, a member of the concurrency set."`
	Row     QuotaRow `json:"row" doc:"Its reservation (gone: the reservation is gone, the member orphaned)."`
}

// GatewayHints is the breaker hints, as the connection's walk holds them.
type GatewayHints struct {
	Walk  string     `json:"walk" enum:"not_started,first_pass,walked" doc:"not_started: not known yet; first_pass: those found so far; walked: every current hint."`
	Items []QuotaRow `json:"items" nullable:"false"`
}

// GatewayKey maps an API key's state (quotas.ReadSubject, with its error)
// and the connection's walk (for the breaker hints). errText hides
// credentials in a read error.
func GatewayKey(conn, id string, status redisview.Status, st quotas.SubjectState, err error, snap quotas.Snapshot, errText ErrText) GatewayKeyPage {
	p := GatewayKeyPage{Conn: conn, ID: Name(id), Redis: redisState(status), State: "not_read", Budgets: []GatewayBudget{},
		Reservations: []GatewayReservation{}, Hints: gatewayHints(snap)}
	if p.Redis.State == RedisDown || err != nil {
		p.Error = errText.text(err)
		return p
	}
	p.ReadAt, p.State = timePtr(st.Read), "absent"
	if st.Any() {
		p.State = "present"
	}
	sub := st.Subject
	if sub.Bucket != nil {
		p.Bucket = gatewayBucket(st)
	}
	for i, per := range st.Budgets {
		p.Budgets = append(p.Budgets, GatewayBudget{Period: per.Value, Current: i == 0, Row: quotaRow(sub, per.Row)})
	}
	if sub.Concurrency != nil {
		p.InFlight = ptr(quotaRow(sub, st.Concurrency))
	}
	for i, r := range st.Reservations {
		req := ""
		if i < len(st.Members) {
			req = st.Members[i]
		}
		p.Reservations = append(p.Reservations, GatewayReservation{Request: Name(req), Row: quotaRow(sub, r)})
	}
	return p
}

func gatewayBucket(st quotas.SubjectState) *GatewayBucket {
	b := &GatewayBucket{Key: Name(st.BucketKey), Exists: st.BucketExists, Error: st.BucketNote}
	pp, _ := st.Subject.Bucket.Params.(*schema.TokenBucketParams)
	if pp != nil {
		b.Capacity, b.RefillPerSec = ptr(pp.Capacity), ptr(pp.RefillPerSec)
	}
	switch {
	case st.Subject.Bucket.Sensitive:
		b.Error = "sensitive: the value is not read"
	case st.BucketExists && st.BucketNote == "":
		tb := st.Bucket
		b.Tokens, b.TTLMs, b.ToFullMs, b.Throttled = ptr(tb.Tokens), ptr(Millis(st.BucketTTL)), ptr(Millis(tb.ToFull)), tb.Refused
		if tb.Refused {
			b.RetryAfterMs = ptr(Millis(tb.RetryAfter))
		}
	case !st.BucketExists && pp != nil:
		b.Tokens, b.ToFullMs = ptr(pp.Capacity), ptr(int64(0))
	}
	return b
}

func gatewayHints(snap quotas.Snapshot) GatewayHints {
	h := GatewayHints{Walk: WalkWalked, Items: []QuotaRow{}}
	switch {
	case !snap.Started:
		h.Walk = WalkNotStarted
	case snap.Pass == 0:
		h.Walk = WalkFirstPass
	}
	for _, fr := range snap.Families {
		if fr.Family.Role != schema.RoleBreakerHint {
			continue
		}
		for _, r := range fr.Rows {
			h.Items = append(h.Items, quotaRow(quotas.Subject{}, r))
		}
	}
	return h
}
