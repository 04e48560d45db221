package demo

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// VertiqueNamespace is rateLimit.redis.namespace in the demo deployment.
const VertiqueNamespace = "vertique:rate-limit"

// DemoSecret is the demo's rateLimit.keyDerivation.secret. It protects
// nothing: the demo data is synthetic and the servers bind to loopback.
const DemoSecret = "keydeck-demo-vertique-secret-2026"

// previousDemoSecret is the generation before the demo's last rotation; its
// buckets are unreachable and wait to expire.
const previousDemoSecret = "keydeck-demo-vertique-secret-2025"

// CanonicalKeyEncoding names the encoding CanonicalKey produces.
//
// Every part of a rate-limit key becomes a netstring, "<byte length>:<bytes>,",
// and the netstrings are concatenated. Length prefixes make the encoding
// injective whatever the parts contain (colons, commas, empty strings), so two
// different callers can never share a bucket; plain joining with a separator
// cannot promise that once user input reaches the key.
const CanonicalKeyEncoding = "netstring"

// CanonicalKey encodes a rate-limit key's parts, e.g. tenant then user.
func CanonicalKey(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
		b.WriteByte(',')
	}
	return b.String()
}

// VertiqueFingerprint is the key-generation segment: the first 8 lowercase
// hex characters of SHA-256(secret).
func VertiqueFingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:4])
}

// VertiqueKey derives a bucket's physical key:
// <namespace>:v1:<fingerprint>:<hex HMAC-SHA-256(secret, "policy:revision:canonicalKey")>.
func VertiqueKey(namespace, secret, policy, revision, canonicalKey string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(policy + ":" + revision + ":" + canonicalKey))
	return namespace + ":v1:" + VertiqueFingerprint(secret) + ":" + hex.EncodeToString(mac.Sum(nil))
}

// vertiqueExpirationSlack is rateLimit.redis.expirationSlackMs.
const vertiqueExpirationSlack = 60 * time.Second

// vertiqueTTL is the PEXPIRE Vertique issues after every write.
func vertiqueTTL(bws []Bandwidth) time.Duration {
	return time.Duration(worstCaseTimeToFullNanos(bws)) + vertiqueExpirationSlack
}

// vertiquePolicy is one configured policy and the callers the demo knows.
type vertiquePolicy struct {
	Name, Revision string
	Format         int32 // 2 when the policy carries a configuration version
	Versioned      bool
	Bandwidths     []Bandwidth
	Callers        [][]string // key parts per caller
}

func greedy(capacity int64, period time.Duration, id string) Bandwidth {
	return Bandwidth{Capacity: capacity, InitialTokens: capacity, RefillPeriodNanos: int64(period),
		RefillTokens: capacity, TimeOfFirstRefillMillis: NotAligned, ID: id}
}

func intervally(capacity int64, period time.Duration) Bandwidth {
	return Bandwidth{Capacity: capacity, InitialTokens: capacity, RefillPeriodNanos: int64(period),
		RefillTokens: capacity, Intervally: true, TimeOfFirstRefillMillis: NotAligned}
}

// vertiquePolicies covers what the decoder must handle: one and two
// bandwidths, greedy and intervally, format 1 and 2 (with and without a
// configuration version), bandwidths with and without ids.
func vertiquePolicies() []vertiquePolicy {
	tenants := []string{"acme", "globex", "initech", "umbrella", "hooli", "tenant:with:colons"}
	return []vertiquePolicy{
		{
			Name: "api-requests", Revision: "7", Format: 2, Versioned: true,
			Bandwidths: []Bandwidth{greedy(100, time.Minute, "burst"), greedy(2000, time.Hour, "sustained")},
			Callers: [][]string{
				{"acme", "ak_live_7Hq2"}, {"acme", "ak_live_Zp0c"}, {"globex", "ak_live_19Fd"},
				{"initech", "ak_live_TPS1"}, {"umbrella", "ak_live_RcN8"}, {"hooli", "ak_live_nucleus"},
				{"hooli", "ak_test_0001"}, {"tenant:with:colons", "ak_live_a,b"},
			},
		},
		{
			Name: "login-attempts", Revision: "3", Format: 1,
			Bandwidths: []Bandwidth{intervally(5, 15*time.Minute)},
			Callers: [][]string{
				{"alice.w"}, {"bob_chen"}, {"zhangwei88"}, {"李雷"}, {"john smith"}, {"ops:admin"},
				{`eve"><script>alert(1)</script>'`}, {"mika.t"}, {"sakura_k"}, {""},
			},
		},
		{
			Name: "password-reset", Revision: "1", Format: 1,
			Bandwidths: []Bandwidth{greedy(3, time.Hour, "")},
			Callers: [][]string{
				{"alice.w@gmail.com"}, {"bob.chen@outlook.com"}, {"lilei@163.com"}, {"devon@eisland.dev"},
				{"wangfang@qq.com"},
			},
		},
		{
			Name: "export-jobs", Revision: "2", Format: 2, Versioned: false,
			Bandwidths: []Bandwidth{intervally(10, 24*time.Hour)},
			Callers:    [][]string{{"acme"}, {"globex"}, {"initech"}, {"hooli"}},
		},
		{
			Name: "search", Revision: "4", Format: 1,
			Bandwidths: []Bandwidth{greedy(30, time.Second, "")},
			Callers: func() [][]string {
				var c [][]string
				for i, ip := range []string{"203.0.113.7", "198.51.100.23", "2001:db8::1f", "192.0.2.44", "203.0.113.99"} {
					c = append(c, []string{tenants[i%len(tenants)], ip})
				}
				return c
			}(),
		},
	}
}

func (p vertiquePolicy) key(secret string, parts []string) string {
	return VertiqueKey(VertiqueNamespace, secret, p.Name, p.Revision, CanonicalKey(parts...))
}

func (p vertiquePolicy) newState(nowNanos int64) BucketState {
	s := newBucket(p.Format, p.Bandwidths, nowNanos)
	if p.Versioned {
		s.HasConfigVersion = true
		s.ConfigVersion, _ = strconv.ParseInt(p.Revision, 10, 64)
	}
	return s
}

// seedVertiqueBuckets replays a burst of consumes on every bucket so the
// states differ the way live ones do: some full, some drained, some with a
// rounding error carried over.
func seedVertiqueBuckets(s *seeder, secret string) {
	for _, p := range vertiquePolicies() {
		full := vertiqueTTL(p.Bandwidths)
		for _, caller := range p.Callers {
			since := time.Duration(s.rng.Int64N(int64(min(full*9/10, 20*time.Minute))))
			st := replayBurst(s, p, s.now.Add(-since))
			s.set(p.key(secret, caller), EncodeBucketState(st), remaining(full, since))
		}
	}
	// The generation before the last rotation, 2 to 30 minutes ago: nobody
	// can derive these keys any more, they only wait for the TTL of their
	// last write (time to full + slack: up to a day for export-jobs, so a
	// demo left running still shows two generations for hours).
	old := vertiquePolicies()
	for i := range 8 {
		p := old[i%len(old)]
		caller := p.Callers[(i/len(old))%len(p.Callers)]
		full := vertiqueTTL(p.Bandwidths)
		since := min(time.Duration(2+s.rng.IntN(28))*time.Minute, full*9/10)
		st := replayBurst(s, p, s.now.Add(-since))
		s.set(p.key(previousDemoSecret, caller), EncodeBucketState(st), remaining(full, since))
	}
}

// replayBurst creates a bucket and consumes from it in a burst ending at end.
func replayBurst(s *seeder, p vertiquePolicy, end time.Time) BucketState {
	bw := p.Bandwidths[0]
	span := time.Duration(s.rng.Float64() * float64(bw.RefillPeriodNanos))
	start := end.Add(-span)
	st := p.newState(start.UnixMilli() * 1e6)
	n := s.rng.IntN(int(bw.Capacity*13/10) + 1)
	for i := range n {
		at := start.Add(span * time.Duration(i+1) / time.Duration(n))
		st.tryConsume(1, at.UnixMilli()*1e6)
	}
	return st
}
