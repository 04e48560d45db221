package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview/schema"
)

// benchPack holds families of the three built-in packs (eIsland, the LLM
// gateway and vertique) with their patterns, types and TTL rules as the
// packs declare them, in any database: a connection has one pack, and the
// benchmark holds them all in database 0 (the only one a cluster has), as
// a deployment pointing --pack-file at such a file would.
const benchPack = `name: bench
title: Benchmark families (eIsland, gateway, vertique)
params:
  namespace: {default: "vertique:rate-limit"}
families:
  - {"id": "bucket", "pattern": "${namespace}:v1:{fingerprint:hex8}:{hmac:hex64}", "type": "string", "ttl": "required", "domain": "Rate limiting", "role": "bucket4j"}
  - {"id": "exact-cache", "pattern": "cache:exact:{ns}:{hash:segment}", "type": "string", "ttl": "required", "domain": "Response cache", "role": "response-cache", "params": {"content": "json"}}
  - {"id": "monthly-tokens", "pattern": "q:tokens:{keyId}:{yyyyMM:digits6}", "type": "string", "ttl": {"max": "40d"}, "domain": "Token budget", "role": "quota", "params": {"limit": 0, "period": "month", "unit": "tokens", "timezone": "UTC"}}
  - {"id": "mg-idempotency", "pattern": "mg:score:idempotency:{submitId}", "type": "string", "ttl": {"max": "24h"}, "domain": "Mini game", "role": "idempotency"}
  - {"id": "mg-session", "pattern": "mg:score:session:{gameId:segment}:{userId}:{sessionId:segment}", "type": "string", "ttl": {"max": "6h"}, "domain": "Mini game", "role": "session"}
  - {"id": "mg-user-meta", "pattern": "mg:score:user-meta:{gameId:segment}:{userId}", "type": "hash", "ttl": {"max": "1h"}, "domain": "Mini game", "role": "leaderboard-meta", "params": {"leaderboard": "mg:score:leaderboard:{gameId}", "fields": ["durationMs", "moves", "achievedAt"], "labels": {"durationMs": "Duration", "moves": "Moves", "achievedAt": "Achieved"}, "formats": {"durationMs": "duration-ms", "moves": "count", "achievedAt": "epoch-ms"}}}
  - {"id": "mg-score-high", "pattern": "mg:score:high:{gameId:segment}:{userId}", "type": "string", "ttl": {"max": "1h"}, "domain": "Mini game", "role": "cache"}
  - {"id": "mg-leaderboard", "pattern": "mg:score:leaderboard:{gameId}", "type": "zset", "ttl": "none", "domain": "Mini game", "role": "leaderboard", "params": {"retained": 200, "order": "desc", "member": "userId", "meta": "mg:score:user-meta:{gameId}:{userId}", "high_score": "mg:score:high:{gameId}:{userId}"}}
  - {"id": "order-channel", "pattern": "payment:order:channel:{outTradeNo}", "type": "string", "ttl": {"max": "30d"}, "domain": "Payment orders", "role": "record"}
  - {"id": "notify-done", "pattern": "payment:notify:done:{channel:segment}:{outTradeNo}:{transactionId:segment}", "type": "string", "ttl": {"max": "30d"}, "domain": "Payment notifications", "role": "idempotency"}
  - {"id": "slider-account-challenges", "pattern": "verify:slider:account:challenges:{account:base64}", "type": "set", "ttl": "required", "domain": "Slider CAPTCHA", "role": "index", "params": {"of": "verify:slider:challenge:{challengeId}"}}
  - {"id": "register-attempts", "pattern": "auth:limit:register:attempts:{ip}", "type": "zset", "ttl": {"max": "1h"}, "domain": "Auth rate limiting", "role": "sliding-window", "params": {"limit": 5, "window": "1h", "score_unit": "ms"}}
  - {"id": "agent-usage", "pattern": "agent:usage:{modelName}", "type": "hash", "ttl": "none", "domain": "Agent usage", "role": "stats", "params": {"fields": ["inputTokens", "cachedTokens", "outputTokens", "reasoningTokens", "requestCount", "costMicroFen"], "registry": "agent:usage:__models__"}}
  - {"id": "user-ban-set", "pattern": "user:ban:set", "type": "set", "ttl": "none", "domain": "User ban", "role": "bloom-members", "params": {"bloom": "user:ban:bloom"}}
  - {"id": "wallpaper-detail-set", "pattern": "wallpaper:detail:set", "type": "set", "ttl": "none", "domain": "Wallpaper bloom", "role": "bloom-members", "params": {"bloom": "wallpaper:detail:bloom"}}
  - {"id": "slider-challenge", "pattern": "verify:slider:challenge:{challengeId}", "type": "string", "ttl": "required", "domain": "Slider CAPTCHA", "role": "challenge"}
  - {"id": "user-ban-bloom", "pattern": "user:ban:bloom", "type": "string", "ttl": "none", "domain": "User ban", "role": "bloom", "params": {"bits": 1000003, "hashes": 6, "scheme": "crc32-javahash-double", "members": "user:ban:set", "purpose": "ban"}}
  - {"id": "wallpaper-detail-bloom", "pattern": "wallpaper:detail:bloom", "type": "string", "ttl": "none", "domain": "Wallpaper bloom", "role": "bloom", "params": {"bits": 2000003, "hashes": 6, "scheme": "crc32-javahash-double", "members": "wallpaper:detail:set"}}
  - {"id": "agent-usage-models", "pattern": "agent:usage:__models__", "type": "set", "ttl": "none", "domain": "Agent usage", "role": "index", "params": {"of": "agent:usage:{modelName}"}}
`

func loadPack() (*schema.Pack, error) { return schema.Load("bench-pack.yaml", []byte(benchPack)) }

// family is one kind of key of the benchmark: its family in benchPack (""
// for keys no pattern matches), its share of -keys (or a fixed count), and
// how its j-th key is named and written. r is a random number fixed by the
// key (mix(f, j)): the same key gets the same name, size and TTL whether
// it is written or its memory read back.
type family struct {
	id    string
	share float64
	fixed int // keys regardless of -keys (share 0)
	name  func(j int, r uint64) string
	// write queues the key's commands; violation: the key breaks its
	// family's TTL rule (the truth of the sweep's violation count).
	write func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) (violation bool)
}

// The TTLs: families whose rule caps them at an hour get 50-59 minutes,
// so no key expires within a 10M-key run (about 45 minutes); the others
// hours or days.
func between(r uint64, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r%uint64(hi-lo))
}

// size is a log-uniform length in [lo, hi): most values small, a long tail.
func size(r uint64, lo, hi int) int {
	u := float64(r%1_000_003) / 1_000_003
	return int(float64(lo) * math.Pow(float64(hi)/float64(lo), u))
}

var filler = strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 1000)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func bucketState(r uint64) []byte {
	n := 1 + int(r>>20%3)
	s := demo.BucketState{Format: 1}
	for i := range n {
		s.Bandwidths = append(s.Bandwidths, demo.Bandwidth{Capacity: int64(100 * (i + 1)), InitialTokens: 100, RefillPeriodNanos: int64(time.Minute), RefillTokens: 100, TimeOfFirstRefillMillis: demo.NotAligned})
		s.States = append(s.States, demo.BandwidthState{LastRefillNanos: 1764000000000000000 + int64(r%1e9), Tokens: int64(r % 100)})
	}
	return demo.EncodeBucketState(s)
}

func members(prefix string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func zmembers(n int, r uint64) []redis.Z {
	out := make([]redis.Z, n)
	for i := range out {
		out[i] = redis.Z{Score: float64((r + uint64(i)*7919) % 1_000_000), Member: "user" + strconv.Itoa(int((r>>8+uint64(i))%5_000_000))}
	}
	return out
}

func expire(p redis.Pipeliner, ctx context.Context, key string, ttl time.Duration) {
	if ttl > 0 {
		p.PExpire(ctx, key, ttl)
	}
}

// bigFields is the size of the big keys: two sets and one hash (flag -big).
var bigFields = 200_000

var families = []family{
	{id: "bucket", share: 0.22,
		name: func(j int, r uint64) string {
			fp := "3f9a0c12"
			if r%10 == 0 { // buckets of an old secret
				fp = "a1b2c3d4"
			}
			return fmt.Sprintf("vertique:rate-limit:v1:%s:%016x%016x%016x%016x", fp, r, mix(1, uint64(j)), mix(2, uint64(j)), mix(3, uint64(j)))
		},
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			if r%1000 == 7 { // a bucket without its TTL
				p.Set(ctx, key, bucketState(r), 0)
				return true
			}
			p.Set(ctx, key, bucketState(r), between(r>>7, time.Hour, 24*time.Hour))
			return false
		}},
	{id: "exact-cache", share: 0.12,
		name: func(j int, r uint64) string {
			return fmt.Sprintf("cache:exact:%s:%016x%016x", []string{"chat", "embed", "moderation"}[r%3], r, uint64(j))
		},
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			v := filler[:size(r>>3, 64, 4096)]
			if r%500 == 3 {
				p.Set(ctx, key, v, 0)
				return true
			}
			p.Set(ctx, key, v, between(r>>11, time.Hour, 24*time.Hour))
			return false
		}},
	{id: "monthly-tokens", share: 0.04,
		name: func(j int, r uint64) string { return fmt.Sprintf("q:tokens:key-%d:2026%02d", j, 1+r%12) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			p.Set(ctx, key, r%10_000_000, between(r>>9, 24*time.Hour, 40*24*time.Hour))
			return false
		}},
	{id: "mg-idempotency", share: 0.16,
		name: func(j int, r uint64) string { return fmt.Sprintf("mg:score:idempotency:%x-%d", r, j) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			p.Set(ctx, key, "1", between(r>>5, 2*time.Hour, 24*time.Hour))
			return false
		}},
	{id: "mg-session", share: 0.10,
		name: func(j int, r uint64) string { return fmt.Sprintf("mg:score:session:%d:user%d:s%d", r%7, j, r>>40) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			p.Set(ctx, key, fmt.Sprintf("%d:%d:%s", r%100000, 1764000000000+j, filler[:r>>13%200]), between(r>>5, time.Hour, 6*time.Hour))
			return false
		}},
	{id: "mg-user-meta", share: 0.10,
		name: func(j int, r uint64) string { return fmt.Sprintf("mg:score:user-meta:%d:user%d", r%7, j) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			f := []any{"score", r % 100000, "durationMs", 1000 + r%9000, "moves", r % 500, "achievedAt", 1764000000000 + j}
			for i := range int(r >> 17 % 10) { // 0-9 more fields
				f = append(f, "extra"+strconv.Itoa(i), filler[:8+int(r>>23%40)])
			}
			p.HSet(ctx, key, f...)
			expire(p, ctx, key, between(r>>5, 50*time.Minute, 59*time.Minute))
			return false
		}},
	{id: "mg-score-high", share: 0.06,
		name: func(j int, r uint64) string { return fmt.Sprintf("mg:score:high:%d:user%d", r%7, j) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			if r%200 == 5 { // over the family's hour
				p.Set(ctx, key, r%100000, 3*time.Hour)
				return true
			}
			p.Set(ctx, key, r%100000, between(r>>5, 50*time.Minute, 59*time.Minute))
			return false
		}},
	{id: "mg-leaderboard", share: 0.003,
		name: func(j int, r uint64) string { return fmt.Sprintf("mg:score:leaderboard:game%d", j) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			p.ZAdd(ctx, key, zmembers(size(r>>3, 10, 1000), r)...) // listpack below 128 members, skiplist above
			if r%50 == 1 {                                         // a leaderboard with a TTL it must not have
				p.Expire(ctx, key, 24*time.Hour)
				return true
			}
			return false
		}},
	{id: "order-channel", share: 0.04,
		name: func(j int, r uint64) string { return fmt.Sprintf("payment:order:channel:KD2026%012d", j) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			p.Set(ctx, key, []string{"alipay", "wechat", "test"}[r%3], between(r>>5, 24*time.Hour, 30*24*time.Hour))
			return false
		}},
	{id: "notify-done", share: 0.047,
		name: func(j int, r uint64) string {
			return fmt.Sprintf("payment:notify:done:%s:KD2026%012d:%d", []string{"alipay", "wechat"}[r%2], j, r>>20)
		},
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			p.Set(ctx, key, "1", between(r>>5, 24*time.Hour, 30*24*time.Hour))
			return false
		}},
	{id: "slider-account-challenges", share: 0.05,
		name: func(j int, r uint64) string {
			return "verify:slider:account:challenges:" + b64(fmt.Sprintf("acct:%d/β", j))
		},
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			n := 1 + int(r>>7%20)
			ms := make([]any, n)
			for i := range ms {
				ms[i] = fmt.Sprintf("%016x", mix(uint64(j), uint64(i)))
			}
			p.SAdd(ctx, key, ms...)
			expire(p, ctx, key, between(r>>13, time.Hour, 2*time.Hour))
			return false
		}},
	{id: "register-attempts", share: 0.04,
		name: func(j int, r uint64) string {
			return fmt.Sprintf("auth:limit:register:attempts:%d.%d.%d.%d", 10+j>>24, j>>16&255, j>>8&255, j&255)
		},
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			p.ZAdd(ctx, key, zmembers(size(r>>3, 1, 60), r)...)
			expire(p, ctx, key, between(r>>5, 50*time.Minute, 59*time.Minute))
			return false
		}},
	{id: "", share: 0.02, // keys no pattern matches: a job queue's leftovers
		name: func(j int, r uint64) string { return fmt.Sprintf("jobs:result:%d:%x", r%16, j) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			var ttl time.Duration
			if r%2 == 0 {
				ttl = between(r>>9, time.Hour, 48*time.Hour)
			}
			p.Set(ctx, key, filler[:size(r>>3, 16, 2048)], ttl)
			return false
		}},
	// A dozen per-model usage hashes, one of them -big fields.
	{id: "agent-usage", fixed: 12,
		name: func(j int, r uint64) string { return fmt.Sprintf("agent:usage:model-%d", j) },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			n := size(r, 50, 5000)
			if j == 0 {
				n = bigFields
			}
			bigHash(p, ctx, key, n)
			return false
		}},
	{id: "user-ban-set", fixed: 1,
		name: func(j int, r uint64) string { return "user:ban:set" },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			bigSet(p, ctx, key, "banned-user-", bigFields)
			return false
		}},
	{id: "wallpaper-detail-set", fixed: 1,
		name: func(j int, r uint64) string { return "wallpaper:detail:set" },
		write: func(p redis.Pipeliner, ctx context.Context, key string, j int, r uint64) bool {
			bigSet(p, ctx, key, "wallpaper-", bigFields)
			return false
		}},
}

func bigSet(p redis.Pipeliner, ctx context.Context, key, prefix string, n int) {
	for i := 0; i < n; i += 1000 {
		ms := members(prefix+strconv.Itoa(i)+"-", min(1000, n-i))
		p.SAdd(ctx, key, ms...)
	}
}

func bigHash(p redis.Pipeliner, ctx context.Context, key string, n int) {
	for i := 0; i < n; i += 1000 {
		f := make([]any, 0, 2000)
		for k := i; k < min(i+1000, n); k++ {
			f = append(f, "user"+strconv.Itoa(k), strconv.Itoa(k*37%100000))
		}
		p.HSet(ctx, key, f...)
	}
}

// mix is splitmix64 of (a, b): the random number of key b of family a.
func mix(a, b uint64) uint64 {
	z := a<<40 ^ b + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// counts is how many keys of each family -keys holds.
func counts(n int) []int {
	out := make([]int, len(families))
	rest, last := n, -1
	for i, f := range families {
		if f.fixed > 0 {
			out[i] = f.fixed
			continue
		}
		out[i] = int(f.share * float64(n))
		rest -= out[i]
		last = i
	}
	out[last] += rest // the rounding
	return out
}

// truth is what the benchmark knows of one family: exactly.
type truth struct {
	count, memory, violations int64
}

// chunk is a run of one family's keys, loaded or read by one pipeline.
type chunk struct{ fam, from, to int }

func chunks(n []int, size int) <-chan chunk {
	ch := make(chan chunk, 64)
	go func() {
		defer close(ch)
		for f, k := range n {
			for from := 0; from < k; from += size {
				ch <- chunk{f, from, min(from+size, k)}
			}
		}
	}()
	return ch
}

// load writes the keys through pipelines of 1,000 keys from workers
// goroutines and returns each family's count and violations.
func load(ctx context.Context, c redis.UniversalClient, n []int, workers int) ([]truth, error) {
	return work(ctx, n, workers, func(ch chunk, t *truth) error {
		f := families[ch.fam]
		p := c.Pipeline()
		for j := ch.from; j < ch.to; j++ {
			r := mix(uint64(ch.fam)+100, uint64(j))
			if f.write(p, ctx, f.name(j, r), j, r) {
				t.violations++
			}
			t.count++
			if p.Len() >= 2000 { // the big keys
				if _, err := p.Exec(ctx); err != nil {
					return err
				}
			}
		}
		_, err := p.Exec(ctx)
		return err
	})
}

// memory reads every key's exact memory (MEMORY USAGE … SAMPLES 0) in
// pipelines, the big keys' included: the truth the sweep's estimates are
// compared with.
func memory(ctx context.Context, c redis.UniversalClient, n []int, workers int) ([]truth, error) {
	return work(ctx, n, workers, func(ch chunk, t *truth) error {
		f := families[ch.fam]
		p := c.Pipeline()
		cmds := make([]*redis.IntCmd, 0, ch.to-ch.from)
		for j := ch.from; j < ch.to; j++ {
			cmds = append(cmds, p.MemoryUsage(ctx, f.name(j, mix(uint64(ch.fam)+100, uint64(j))), 0))
		}
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
		for _, c := range cmds {
			t.memory += c.Val()
		}
		return nil
	})
}

func work(ctx context.Context, n []int, workers int, do func(chunk, *truth) error) ([]truth, error) {
	ch := chunks(n, 1000)
	per := make([][]truth, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		per[w] = make([]truth, len(families))
		wg.Go(func() {
			for c := range ch {
				if errs[w] != nil {
					continue // drain
				}
				errs[w] = do(c, &per[w][c.fam])
			}
		})
	}
	wg.Wait()
	out := make([]truth, len(families))
	for w := range workers {
		if errs[w] != nil {
			return nil, errs[w]
		}
		for f := range families {
			out[f].count += per[w][f].count
			out[f].memory += per[w][f].memory
			out[f].violations += per[w][f].violations
		}
	}
	return out, nil
}
