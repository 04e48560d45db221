package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/redis/go-redis/v9"
)

// Bloom filter sizes and hash count from seed 000.
const (
	VersionBloomBits   = 1_000_003
	WallpaperBloomBits = 2_000_003
	UserBanBloomBits   = 1_000_003
	BloomHashes        = 6
)

// cst is the application's business time zone (UTC+8): daily and monthly
// windows roll over at its midnight, not UTC's.
var cst = time.FixedZone("UTC+8", 8*3600)

// SeedEIsland writes the eIsland backend's data into DB 0–14. The data is a
// deterministic function of now: the same instant always gives the same keys.
func SeedEIsland(ctx context.Context, client func(db int) redis.Cmdable, now time.Time) error {
	people := demoUsers()
	seeders := []func(*seeder){
		seedDefaultCache, seedAvatars, seedVerification, seedWallpapers, seedSlider,
		seedTOTP, seedAuthLimits, seedUploads, seedFeedback, seedBans,
		seedPayment, seedWeather, seedBalances, seedAgentUsage, seedMiniGame,
	}
	for db, seed := range seeders {
		s := &seeder{rng: rand.New(rand.NewPCG(0xE15, uint64(100+db))), now: now, users: people}
		if err := s.run(ctx, client(db), seed); err != nil {
			return fmt.Errorf("seed eIsland DB %d: %w", db, err)
		}
	}
	return nil
}

// SeedGateway writes the LLM gateway's keys (seed 003), including one
// reservation without a TTL: a deliberate schema violation for the console
// to find.
func SeedGateway(ctx context.Context, c redis.Cmdable, now time.Time) error {
	s := &seeder{rng: rand.New(rand.NewPCG(0x6A7E, 3)), now: now}
	if err := s.run(ctx, c, seedGatewayKeys); err != nil {
		return fmt.Errorf("seed gateway: %w", err)
	}
	return nil
}

// SeedVertique writes Bucket4j buckets for the demo policies under the
// current key generation of secret, plus a few buckets of an older
// generation with short TTLs left.
func SeedVertique(ctx context.Context, c redis.Cmdable, now time.Time, secret string) error {
	s := &seeder{rng: rand.New(rand.NewPCG(0xB4, 2)), now: now}
	if err := s.run(ctx, c, func(s *seeder) { seedVertiqueBuckets(s, secret) }); err != nil {
		return fmt.Errorf("seed vertique: %w", err)
	}
	return nil
}

// demoUsers is the account population shared by the seed and the simulator.
func demoUsers() []string { return users(rand.New(rand.NewPCG(0xE15, 1)), 260) }

// seeder carries what every per-database seeding function needs. Commands
// go into one pipeline per database: thousands of single round trips would
// make the demo's start-up visibly slow.
type seeder struct {
	ctx   context.Context
	p     redis.Pipeliner
	rng   *rand.Rand
	now   time.Time
	users []string
}

// left is the TTL still remaining on a key written with full TTL some time
// ago, so that a fresh demo looks like a running system rather than one
// where everything was written at once. It keeps at least 30% of the TTL so
// that short-lived families are still there when someone first looks.
func (s *seeder) left(full time.Duration) time.Duration {
	d := full - time.Duration(s.rng.Int64N(int64(full)*7/10))
	return d.Truncate(time.Millisecond)
}

// held is the TTL left on a lock: holders keep a lock for a second or two,
// so a lock seen at all was almost always taken moments ago.
func (s *seeder) held(full time.Duration) time.Duration {
	return remaining(full, time.Duration(s.rng.Int64N(int64(2*time.Second))))
}

// ago is a random instant within the last d.
func (s *seeder) ago(d time.Duration) time.Time {
	return s.now.Add(-time.Duration(s.rng.Int64N(int64(d))))
}

func (s *seeder) some(n int) []string {
	out := make([]string, 0, n)
	for _, i := range s.rng.Perm(len(s.users))[:n] {
		out = append(out, s.users[i])
	}
	return out
}

func (s *seeder) run(ctx context.Context, c redis.Cmdable, seed func(*seeder)) error {
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		s.ctx, s.p = ctx, p
		seed(s)
		return nil
	})
	return err
}

func (s *seeder) set(key string, v any, ttl time.Duration) { s.p.Set(s.ctx, key, v, ttl) }

// bloom writes the dual structure: the exact set and the bits BloomPositions
// gives, the same scheme the application checks. The bitmap is built here
// and written with one SET; the bytes are exactly what SETBIT per position
// leaves behind (bit 0 is the high bit of byte 0, the string ends at the
// byte of the highest bit), but miniredis copies the whole string on every
// SETBIT, which made thousands of them on a 250 KB bitmap take seconds.
func (s *seeder) bloom(bloomKey, setKey string, bits int64, members []string) {
	var bitmap []byte
	for _, m := range members {
		s.p.SAdd(s.ctx, setKey, m)
		for _, pos := range redisview.BloomPositions(m, bits, BloomHashes) {
			if need := int(pos/8) + 1; need > len(bitmap) {
				bitmap = append(bitmap, make([]byte, need-len(bitmap))...)
			}
			bitmap[pos/8] |= 0x80 >> (pos % 8)
		}
	}
	s.set(bloomKey, bitmap, 0)
}

// remaining is the TTL left on a key written with full TTL, since ago; never
// below a second, because a zero or sub-millisecond PEXPIRE deletes the key.
func remaining(full, since time.Duration) time.Duration {
	return max(time.Second, (full - since).Truncate(time.Millisecond))
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// js encodes like Jackson does: markup stays literal instead of becoming
// \u003c escapes, so hostile values reach the console as the real services
// would store them.
func js(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only called with plain maps and slices
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// endOfDay and endOfMonth are the expiry points of daily and monthly quotas.
func endOfDay(t time.Time) time.Time {
	t = t.In(cst)
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, cst)
}

func endOfMonth(t time.Time) time.Time {
	t = t.In(cst)
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, cst)
}

func yyyymm(t time.Time) string { return t.In(cst).Format("200601") }
