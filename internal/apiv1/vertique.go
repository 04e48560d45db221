package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
)

// VertiquePage mirrors the vertique page's inventory (handlers/vertique.go):
// the Bucket4j buckets a bounded walk found, by key generation (secret
// fingerprint). Meant for GET /api/v1/connections/{conn}/vertique; the
// finder is VertiqueBucket.
type VertiquePage struct {
	Conn      string             `json:"conn" doc:"The connection's name." example:"vertique"`
	Redis     RedisState         `json:"redis" doc:"Whether the server answers; when down the buckets are not known."`
	Secret    VertiqueSecret     `json:"secret" doc:"The key-derivation secret Keydeck was given (never the secret itself)."`
	Family    *FamilyRef         `json:"family,omitempty" doc:"The pack's Bucket4j family keyed by a fingerprint and an HMAC; absent when the pack has none (then nothing else is read)."`
	Inventory *VertiqueInventory `json:"inventory,omitempty" doc:"The walk's findings; absent when not read (see inventory_error, or no family)."`
	InvError  string             `json:"inventory_error,omitempty" doc:"Why the buckets are not known (Redis down, or the walk failed)."`
}

// VertiqueSecret says whether Keydeck has vertique's secret: the
// inventory then tells the current generation, and the finder derives
// keys. The secret is never sent; its fingerprint is in every bucket key.
type VertiqueSecret struct {
	Configured  bool   `json:"configured" doc:"A secret is configured."`
	Demo        bool   `json:"demo" doc:"It is the embedded demo's own secret (it protects nothing)."`
	From        string `json:"from,omitempty" doc:"Where it came from (an environment variable's or a file's name); absent when not configured."`
	Fingerprint string `json:"fingerprint,omitempty" doc:"The first 8 hex digits of its SHA-256, as the current keys carry; absent when not configured." example:"3f9a0c1e"`
}

// VertiqueInventory is the buckets a bounded walk found.
type VertiqueInventory struct {
	Pattern     string               `json:"pattern" doc:"The family's key pattern."`
	DBs         []int                `json:"dbs" nullable:"false" doc:"The databases walked."`
	ReadAt      time.Time            `json:"read_at" doc:"When the walk ran (it is cached for a few seconds)."`
	Complete    bool                 `json:"complete" doc:"The walk reached the end of every database; false: it stopped at its budget, and counts are at least these."`
	Scans       int                  `json:"scans" minimum:"0" doc:"SCAN calls made."`
	Seen        int64                `json:"seen" minimum:"0" doc:"Keys SCAN returned."`
	Generations []VertiqueGeneration `json:"generations" nullable:"false" doc:"The current generation first, then by keys."`
}

// VertiqueGeneration is the buckets of one secret fingerprint.
type VertiqueGeneration struct {
	Fingerprint string `json:"fingerprint" example:"3f9a0c1e"`
	Current     *bool  `json:"current,omitempty" doc:"The configured secret's generation (false: an older one, unreachable, waiting for its TTL); absent when no secret is configured (not known)."`
	Keys        int64  `json:"keys" minimum:"0"`
	Memory      *int64 `json:"memory_bytes,omitempty" minimum:"0" doc:"MEMORY USAGE summed over memory_keys keys (a lower bound when fewer than keys); absent when none could be measured."`
	MemoryKeys  int64  `json:"memory_keys" minimum:"0" doc:"Keys measured."`
	NoTTL       int64  `json:"no_ttl" minimum:"0" doc:"Keys without a TTL: they never expire (the pack requires one)."`
	MaxTTLMs    int64  `json:"max_ttl_ms" doc:"The longest TTL left: when an older generation is gone at the latest; -1: a key has none."`
}

// Vertique maps the vertique page's inventory (vertique.Cache.Get, with
// its error), f being the pack's Bucket4j family (nil: none).
func Vertique(conn string, st redisview.Status, secret VertiqueSecret, f *schema.Family, inv vertique.Inventory, err error, errText ErrText) VertiquePage {
	p := VertiquePage{Conn: conn, Redis: redisState(st), Secret: secret}
	if f == nil {
		return p
	}
	ref := familyRef(f, vertiqueDB(f))
	p.Family = &ref
	switch {
	case p.Redis.State == RedisDown:
		p.InvError = "Redis is unreachable: " + st.Err
		return p
	case err != nil:
		p.InvError = errText.text(err)
		return p
	}
	v := &VertiqueInventory{Pattern: f.Pattern.String(), DBs: append([]int{}, inv.DBs...), ReadAt: Time(inv.Read), Complete: inv.Complete,
		Scans: inv.Scans, Seen: inv.Seen, Generations: make([]VertiqueGeneration, 0, len(inv.Generations))}
	for _, g := range inv.Generations {
		vg := VertiqueGeneration{Fingerprint: g.Fingerprint, Keys: g.Keys, Memory: optional(g.Memory, g.MemKeys > 0), MemoryKeys: g.MemKeys,
			NoTTL: g.NoTTL, MaxTTLMs: Millis(g.MaxTTL)}
		if inv.HasCurrent {
			vg.Current = ptr(g.Current)
		}
		v.Generations = append(v.Generations, vg)
	}
	p.Inventory = v
	return p
}

func vertiqueDB(f *schema.Family) int {
	if len(f.DBs) > 0 {
		return f.DBs[0]
	}
	return 0
}

// VertiqueBucket mirrors the vertique page's finder: the bucket key
// derived from a policy, its revision and a caller's key with the secret,
// and its decoded Bucket4j state. Support and up only (the finder is an
// HMAC oracle). Meant for
// GET /api/v1/connections/{conn}/vertique/bucket?policy=P&revision=R&key=K[&enc=parts].
type VertiqueBucket struct {
	Key    Name           `json:"key" doc:"The derived bucket key (the secret is never sent)."`
	DB     int            `json:"db" minimum:"0"`
	State  string         `json:"state" enum:"found,absent,unreadable,hidden" doc:"found: state decoded; absent: no bucket at this key (the caller has not been limited by this policy within the bucket's TTL, or policy, revision or key differ from the application's); unreadable: see error; hidden: the family is sensitive."`
	Bucket *Bucket4jState `json:"bucket,omitempty" doc:"The decoded state; only when found."`
	Error  string         `json:"error,omitempty" doc:"Why the state could not be read or decoded."`
}

// Bucket4jState is a Bucket4j state, refilled to the moment of the read.
type Bucket4jState struct {
	Tokens     int64               `json:"tokens" doc:"Available now: the least over the bandwidths (may be negative)."`
	ToFullMs   int64               `json:"to_full_ms" minimum:"0" doc:"Until every bandwidth is full."`
	Consumed   int64               `json:"consumed" doc:"Running total consumed (RemoteStat)."`
	ClockSkew  bool                `json:"clock_skew" doc:"A last refill more than a day from now: the writer's clock and Keydeck's disagree."`
	TTLMs      int64               `json:"ttl_ms" doc:"-1: none."`
	Bandwidths []Bucket4jBandwidth `json:"bandwidths" nullable:"false"`
}

// Bucket4jBandwidth is one bandwidth of a Bucket4j state.
type Bucket4jBandwidth struct {
	ID             string     `json:"id,omitempty" doc:"Its id; absent when it has none."`
	Capacity       int64      `json:"capacity" minimum:"0"`
	RefillTokens   int64      `json:"refill_tokens" minimum:"0"`
	RefillPeriodMs int64      `json:"refill_period_ms" minimum:"0"`
	Intervally     bool       `json:"intervally" doc:"Refills whole refill_tokens per period; false: greedy."`
	LastRefill     *time.Time `json:"last_refill,omitempty"`
	Stored         int64      `json:"stored" doc:"Tokens as written."`
	Tokens         int64      `json:"tokens" doc:"Refilled to now."`
	ToFullMs       int64      `json:"to_full_ms" minimum:"0"`
}

// VertiqueFind maps the finder's read of the derived key (decode.ReadKey
// of key in db, with its error).
func VertiqueFind(key string, db int, res decode.Result, err error, errText ErrText) VertiqueBucket {
	v := VertiqueBucket{Key: Name(key), DB: db}
	b := decode.As[decode.Bucket4j](res)
	switch {
	case err != nil:
		v.State, v.Error = "unreadable", errText.text(err)
	case res.Sensitive:
		v.State = "hidden"
	case b != nil:
		v.State, v.Bucket = "found", bucket4jState(b)
	case res.Note == "the key is gone":
		v.State = "absent"
	default:
		v.State, v.Error = "unreadable", res.Note
	}
	return v
}

func bucket4jState(b *decode.Bucket4j) *Bucket4jState {
	s := &Bucket4jState{Tokens: b.Tokens, ToFullMs: Millis(b.ToFull), Consumed: b.Consumed, ClockSkew: b.ClockSkew, TTLMs: Millis(b.TTL),
		Bandwidths: make([]Bucket4jBandwidth, 0, len(b.Bandwidths))}
	for _, bw := range b.Bandwidths {
		s.Bandwidths = append(s.Bandwidths, Bucket4jBandwidth{ID: bw.ID, Capacity: bw.Capacity, RefillTokens: bw.RefillTokens,
			RefillPeriodMs: Millis(bw.RefillPeriod), Intervally: bw.Intervally, LastRefill: timePtr(bw.LastRefill), Stored: bw.Stored,
			Tokens: bw.Tokens, ToFullMs: Millis(bw.ToFull)})
	}
	return s
}
