// Package vertique derives the Redis key of one caller's Bucket4j bucket as
// vertique-rate-limit-redis does, and counts the buckets of each key
// generation (secret fingerprint) with a bounded walk.
//
// The physical key is <namespace>:v1:<fingerprint>:<hmac> where fingerprint
// is the first 8 lowercase hex characters of SHA-256(secret) and hmac the
// 64 lowercase hex characters of HMAC-SHA-256(secret,
// "policyName:policyRevision:canonicalKeyEncoding") (seed 002, DESIGN.md).
// The namespace comes from the pack's pattern, never from code.
package vertique

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Placeholder names of the bucket family's pattern that the derivation
// fills (the vertique pack's {fingerprint:hex8} and {hmac:hex64}).
const (
	FingerprintVar = "fingerprint"
	HMACVar        = "hmac"
)

// ErrNoFamily: the connection's pack has no Bucket4j family keyed by a
// fingerprint and an HMAC.
var ErrNoFamily = errors.New("the pack has no Bucket4j family keyed by {fingerprint} and {hmac}")

// Fingerprint is the key generation of secret: the first 8 lowercase hex
// characters of SHA-256(secret).
func Fingerprint(secret []byte) string {
	sum := sha256.Sum256(secret)
	return hex.EncodeToString(sum[:4])
}

// MAC is the lowercase hex HMAC-SHA-256(secret, policy:revision:canonical).
func MAC(secret []byte, policy, revision, canonical string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(policy + ":" + revision + ":" + canonical))
	return hex.EncodeToString(m.Sum(nil))
}

// Family is the pack's bucket family: role bucket4j, with placeholders
// FingerprintVar and HMACVar.
func Family(p *schema.Pack) (*schema.Family, error) {
	if p == nil {
		return nil, ErrNoFamily
	}
	for _, f := range p.Families {
		if f.Role != schema.RoleBucket4j {
			continue
		}
		var fp, mac bool
		for _, ph := range f.Pattern.Placeholders() {
			fp = fp || ph.Name == FingerprintVar
			mac = mac || ph.Name == HMACVar
		}
		if fp && mac && len(f.Pattern.Placeholders()) == 2 {
			return f, nil
		}
	}
	return nil, ErrNoFamily
}

// Key derives the bucket key of a caller through family f's pattern.
func Key(f *schema.Family, secret []byte, policy, revision, canonical string) (string, error) {
	return f.Key(map[string]string{FingerprintVar: Fingerprint(secret), HMACVar: MAC(secret, policy, revision, canonical)})
}

// CanonicalKey is the netstring encoding the embedded demo's callers use
// ("<byte length>:<bytes>," per part), offered so a caller's parts can be
// typed one per line; a deployment may encode otherwise, so the form also
// takes the canonical key as it is.
func CanonicalKey(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		fmt.Fprintf(&b, "%d:%s,", len(p), p)
	}
	return b.String()
}

// Generation is the buckets of one fingerprint.
type Generation struct {
	Fingerprint string
	Current     bool // the fingerprint of the configured secret
	Keys        int64
	Memory      int64 // bytes, MEMORY USAGE summed; of MemKeys keys
	MemKeys     int64
	NoTTL       int64 // keys without a TTL (the pack requires one)
	MaxTTL      time.Duration
}

// Inventory is the buckets a bounded walk found, by generation.
type Inventory struct {
	Family      *schema.Family
	DBs         []int
	Generations []Generation // the current one first, then by keys
	Scans       int
	Seen        int64 // keys SCAN returned
	Complete    bool  // the walk reached the end of every database
	Read        time.Time
	HasCurrent  bool // a secret is configured (Current is meaningful)
}

// Budget of one inventory walk: SCAN calls of COUNT each.
type Budget struct {
	Scans int
	Count int
}

// DefaultBudget reads up to 50,000 keys.
var DefaultBudget = Budget{Scans: 100, Count: 500}

// Walk counts the family's keys by generation: SCAN with the family's
// literal prefix as MATCH and TYPE string, at most b.Scans calls per
// database, then one pipeline of PTTL and MEMORY USAGE per reply.
func Walk(ctx context.Context, conn *redisview.Conn, f *schema.Family, current string, b Budget, now time.Time) (Inventory, error) {
	if b.Scans <= 0 {
		b = DefaultBudget
	}
	inv := Inventory{Family: f, Complete: true, Read: now, HasCurrent: current != ""}
	dbs := f.DBs
	if dbs == nil {
		dbs = []int{0}
	}
	inv.DBs = dbs
	gens := map[string]*Generation{}
	if current != "" {
		gens[current] = &Generation{Fingerprint: current, Current: true}
	}
	cls := conn.Classifier()
	if cls == nil {
		return Inventory{}, ErrNoFamily
	}
	match := schema.EscapeGlob(f.Pattern.LiteralPrefix()) + "*"
	for _, db := range dbs {
		c := conn.DB(db)
		cursor := redisview.CursorStart
		for {
			if inv.Scans >= b.Scans {
				inv.Complete = false
				break
			}
			keys, next, err := redisview.ScanStep(ctx, c, cursor, match, int64(b.Count), "string")
			if err != nil {
				return Inventory{}, conn.WrapErr(redisview.ReadError("walking the buckets with SCAN", err))
			}
			inv.Scans++
			inv.Seen += int64(len(keys))
			if err := count(ctx, c, cls, f, db, keys, gens); err != nil {
				return Inventory{}, conn.WrapErr(redisview.ReadError("reading the buckets", err))
			}
			cursor = next
			if cursor.Done() {
				break
			}
		}
	}
	for _, g := range gens {
		inv.Generations = append(inv.Generations, *g)
	}
	slices.SortFunc(inv.Generations, func(a, b Generation) int {
		switch {
		case a.Current != b.Current:
			if a.Current {
				return -1
			}
			return 1
		case a.Keys != b.Keys:
			if a.Keys > b.Keys {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Fingerprint, b.Fingerprint)
	})
	return inv, nil
}

func count(ctx context.Context, c redis.UniversalClient, cls *schema.Classifier, f *schema.Family, db int, keys []string, gens map[string]*Generation) error {
	type q struct {
		gen  *Generation
		pttl *redis.DurationCmd
		mem  *redis.IntCmd
	}
	var qs []q
	pipe := c.Pipeline()
	for _, k := range keys {
		m, ok := cls.Match(db, k)
		if !ok || m.Family == nil || m.Family.ID != f.ID {
			continue
		}
		fp := ""
		for _, v := range m.Vars {
			if v.Name == FingerprintVar {
				fp = v.Value
			}
		}
		g := gens[fp]
		if g == nil {
			g = &Generation{Fingerprint: fp}
			gens[fp] = g
		}
		g.Keys++
		qs = append(qs, q{gen: g, pttl: pipe.PTTL(ctx, k), mem: pipe.MemoryUsage(ctx, k)})
	}
	if len(qs) == 0 {
		return nil
	}
	// A refused MEMORY (ACL, a managed Redis) leaves memory unknown; a
	// connection error fails the walk.
	if _, err := pipe.Exec(ctx); err != nil && redisview.IsConnErr(err) {
		return err
	}
	for _, x := range qs {
		if d, err := x.pttl.Result(); err == nil {
			if d == -1 {
				x.gen.NoTTL++
			}
			x.gen.MaxTTL = max(x.gen.MaxTTL, d)
		}
		if n, err := x.mem.Result(); err == nil {
			x.gen.Memory += n
			x.gen.MemKeys++
		}
	}
	return nil
}

// Cache keeps each connection's last inventory for a while, so page loads
// share one walk.
type Cache struct {
	TTL time.Duration
	mu  sync.Mutex
	m   map[string]cached
}

type cached struct {
	inv Inventory
	at  time.Time
}

// Get returns conn's inventory no older than TTL, walking when needed.
func (c *Cache) Get(ctx context.Context, conn *redisview.Conn, f *schema.Family, current string, now time.Time) (Inventory, error) {
	ttl := c.TTL
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	k := conn.Name + "\x00" + f.ID + "\x00" + current
	c.mu.Lock()
	if x, ok := c.m[k]; ok && now.Sub(x.at) < ttl && x.inv.Family == f {
		c.mu.Unlock()
		return x.inv, nil
	}
	c.mu.Unlock()
	inv, err := Walk(ctx, conn, f, current, DefaultBudget, now)
	if err != nil {
		return Inventory{}, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]cached{}
	}
	c.m[k] = cached{inv: inv, at: now}
	c.mu.Unlock()
	return inv, nil
}
