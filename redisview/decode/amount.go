package decode

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Quota is a counter against a limit per calendar period.
type Quota struct {
	Used     int64
	Limit    int64 // 0: the pack gives none (set per subject elsewhere)
	Unit     string
	Period   string // day or month
	Percent  float64
	ResetsAt time.Time // the next period boundary after now, in the pack's zone
	TTL      time.Duration
	Reached  bool
}

func readQuota(ctx context.Context, c redis.Cmdable, key string, p *schema.QuotaParams, now time.Time) (Quota, error) {
	s, ok, err := smallString(ctx, c, key)
	if err != nil {
		return Quota{}, err
	}
	if !ok {
		return Quota{}, notDecodable("the key is gone")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return Quota{}, notDecodable("the value is not an integer count")
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return Quota{}, err
	}
	q := Quota{Used: n, Limit: p.Limit, Unit: p.Unit, Period: p.Period, TTL: d, ResetsAt: schema.NextPeriod(p.Period, p.Location(), now)}
	if p.Limit > 0 {
		q.Percent = float64(n) / float64(p.Limit) * 100
		q.Reached = n >= p.Limit
	}
	return q, nil
}

// Balance is a decimal amount of money or credit, as written.
type Balance struct {
	Amount string // the decimal as stored
	Unit   string
	Scale  int // decimal places the pack says the application writes
	TTL    time.Duration
}

func readBalance(ctx context.Context, c redis.Cmdable, key string, p *schema.BalanceParams) (Balance, error) {
	s, ok, err := smallString(ctx, c, key)
	if err != nil {
		return Balance{}, err
	}
	if !ok {
		return Balance{}, notDecodable("the key is gone")
	}
	if !isDecimal(s) {
		return Balance{}, notDecodable("the value is not a decimal amount")
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return Balance{}, err
	}
	return Balance{Amount: s, Unit: p.Unit, Scale: p.Scale, TTL: d}, nil
}

func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(x string) bool {
		for _, r := range x {
			if r < '0' || r > '9' {
				return false
			}
		}
		return x != ""
	}
	return digits(whole) && (!dot || digits(frac))
}
