// Package benchkit is what the benchmark commands share: eIsland-shaped
// data to load into a fresh redis-server, and the readings of what Redis
// did (INFO commandstats, SLOWLOG).
package benchkit

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/stats"
)

// Shape is one kind of key of the benchmark data: its database, its share
// of the keys, and how key i of it is written.
type Shape struct {
	DB    int
	Share float64
	Write func(p redis.Pipeliner, ctx context.Context, i int)
}

// B64 is an account as the slider CAPTCHA keys name it: URL-safe base64
// without padding, one of the encodings Keydeck derives.
func B64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// User, Account and IP name the i-th key's person and address.
func User(i int) string    { return "user" + strconv.Itoa(i%50000) }
func Account(i int) string { return fmt.Sprintf("acct:%d/β", i%50000) }
func IP(i int) string      { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

// EislandShapes are the eIsland databases of the search and user
// benchmarks: slider keys (db4), TOTP replay nonces (db5), login failures
// and replay nonces (db6), feedback counters (db8), mini-game keys (db14).
var EislandShapes = []Shape{
	{4, 0.15, func(p redis.Pipeliner, ctx context.Context, i int) {
		switch i % 3 {
		case 0:
			p.Set(ctx, "verify:slider:fail:account:"+B64(Account(i)+"#"+strconv.Itoa(i)), 1, 10*time.Minute)
		case 1:
			p.HSet(ctx, "verify:slider:rate:create:ip:"+B64(IP(i)), "tokens", 5, "ts", 1)
		default:
			p.Set(ctx, "verify:slider:challenge:"+strconv.FormatInt(int64(i)*2654435761, 16), 120, 2*time.Minute)
		}
	}},
	{5, 0.15, func(p redis.Pipeliner, ctx context.Context, i int) {
		p.Set(ctx, fmt.Sprintf("totp:security:replay:%s:%d:%06d", User(i), 58800000+i, i%1000000), "1", 2*time.Minute)
	}},
	{6, 0.15, func(p redis.Pipeliner, ctx context.Context, i int) {
		if i%2 == 0 {
			p.ZAdd(ctx, "auth:limit:login:failures:"+User(i)+"-"+strconv.Itoa(i), redis.Z{Score: float64(i), Member: strconv.Itoa(i)})
		} else {
			p.Set(ctx, fmt.Sprintf("auth:replay:%s:POST:/api/pay:%d", User(i), i), i, 5*time.Minute)
		}
	}},
	{8, 0.15, func(p redis.Pipeliner, ctx context.Context, i int) {
		p.Set(ctx, "issue-feedback:submit:"+User(i)+":"+IP(i), 1, time.Hour)
	}},
	{14, 0.40, func(p redis.Pipeliner, ctx context.Context, i int) {
		switch i % 4 {
		case 0:
			p.Set(ctx, fmt.Sprintf("mg:score:high:%d:%s", i%7, User(i)), i%100000, time.Hour)
		case 1:
			p.HSet(ctx, fmt.Sprintf("mg:score:user-meta:%d:%s", i%7, User(i)), "score", i%100000, "moves", i%500)
		case 2:
			p.Set(ctx, fmt.Sprintf("mg:score:idempotency:%x-%d", i*2654435761, i), "1", 24*time.Hour)
		default:
			p.Set(ctx, fmt.Sprintf("mg:score:session:%d:%s:s%d", i%7, User(i), i), i, 6*time.Hour)
		}
	}},
}

// LoadEisland writes n keys of EislandShapes to the server at addr, in
// pipelines of 10,000.
func LoadEisland(ctx context.Context, addr string, n int) error {
	i := 0
	for si, s := range EislandShapes {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: s.DB})
		k := int(s.Share * float64(n))
		if si == len(EislandShapes)-1 {
			k = n - i
		}
		p := c.Pipeline()
		for j := 0; j < k; j, i = j+1, i+1 {
			s.Write(p, ctx, i)
			if p.Len() >= 10000 {
				if _, err := p.Exec(ctx); err != nil {
					return err
				}
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
		c.Close()
	}
	return nil
}

// Calls is INFO commandstats as calls per command, the readings' own
// commands left out.
func Calls(ctx context.Context, c *redis.Client) (map[string]int64, error) {
	txt, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := redistest.ParseCommandStats(txt)
	for _, own := range []string{"slowlog", "slowlog|reset", "slowlog|get", "config|resetstat"} {
		delete(out, own)
	}
	return out, nil
}

// CmdList says a commandstats delta in words: the total and each command.
func CmdList(m map[string]int64) string {
	var parts []string
	var total int64
	for k, v := range m {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", strings.ToUpper(k), v))
			total += v
		}
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// Slowest is the slowest command in SLOWLOG, ignoring the bench's own.
func Slowest(ctx context.Context, c *redis.Client) (string, error) {
	logs, err := c.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return "", err
	}
	var best redis.SlowLog
	over, n := 0, 0
	for _, l := range logs {
		if len(l.Args) == 0 {
			continue
		}
		switch strings.ToLower(l.Args[0]) {
		case "info", "slowlog", "config":
			continue
		}
		n++
		if l.Duration > 2*time.Millisecond {
			over++
		}
		if l.Duration > best.Duration {
			best = l
		}
	}
	if len(best.Args) == 0 {
		return "none logged", nil
	}
	return fmt.Sprintf("%s %.80q; %d of %d commands over 2 ms", best.Duration, strings.Join(best.Args, " "), over, n), nil
}

// CPUSeconds is the server's CPU time so far (INFO cpu: sys + user).
func CPUSeconds(ctx context.Context, c *redis.Client) (float64, error) {
	txt, err := c.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	in := stats.ParseInfo(txt)
	sys, ok1 := in.Float("used_cpu_sys")
	user, ok2 := in.Float("used_cpu_user")
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("INFO cpu has no used_cpu_sys/used_cpu_user")
	}
	return sys + user, nil
}

// CPUOver measures the server's CPU over d, in % of one core.
func CPUOver(ctx context.Context, c *redis.Client, d time.Duration) (float64, error) {
	a, err := CPUSeconds(ctx, c)
	if err != nil {
		return 0, err
	}
	t := time.Now()
	time.Sleep(d)
	b, err := CPUSeconds(ctx, c)
	if err != nil {
		return 0, err
	}
	return (b - a) / time.Since(t).Seconds() * 100, nil
}
