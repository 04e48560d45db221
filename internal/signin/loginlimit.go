package signin

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// LoginLimiter counts failed sign-ins per account and per client address in
// Redis, so several Keydeck replicas enforce one limit. When Redis cannot
// be reached it falls back to counting in this process, which still stops a
// guessing attack against this replica.
type LoginLimiter struct {
	client     *redis.Client
	prefix     string
	perAccount int
	perIP      int
	window     time.Duration

	mu    sync.Mutex
	local map[string]localCount
}

type localCount struct {
	n     int
	reset time.Time
}

// NewLoginLimiter allows perAccount failures per account and perIP per
// address within window.
func NewLoginLimiter(client *redis.Client, perAccount, perIP int, window time.Duration) *LoginLimiter {
	return &LoginLimiter{client: client, prefix: "keydeck:login:fail:", perAccount: perAccount, perIP: perIP, window: window, local: map[string]localCount{}}
}

// attempt counts one sign-in attempt against a fixed window (the TTL is set
// by the first attempt only) and returns the count and the time left.
var attempt = redis.NewScript(`local n = redis.call('INCR', KEYS[1]); if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end; return {n, redis.call('PTTL', KEYS[1])}`)

func (l *LoginLimiter) keys(user, ip string) (acct, addr string) {
	return l.prefix + "user:" + user, l.prefix + "ip:" + ip
}

// Attempt reserves one sign-in attempt for the account and the address
// before the password is checked, so parallel guesses cannot all slip past
// a check made before any of them failed. It returns how long to wait when
// either limit is exceeded; 0 means go ahead.
func (l *LoginLimiter) Attempt(ctx context.Context, user, ip string) time.Duration {
	acct, addr := l.keys(user, ip)
	var wait time.Duration
	for _, k := range []struct {
		key   string
		limit int
	}{{acct, l.perAccount}, {addr, l.perIP}} {
		n, ttl, err := l.incr(ctx, k.key)
		if err != nil {
			n, ttl = l.localIncr(k.key)
		}
		if n > k.limit {
			wait = max(wait, ttl, time.Second)
		}
	}
	return wait
}

func (l *LoginLimiter) incr(ctx context.Context, key string) (int, time.Duration, error) {
	if l.client == nil {
		return 0, 0, errors.New("no store")
	}
	v, err := attempt.Run(ctx, l.client, []string{key}, l.window.Milliseconds()).Int64Slice()
	if err != nil || len(v) != 2 {
		return 0, 0, errors.Join(err, errors.New("unexpected reply"))
	}
	return int(v[0]), time.Duration(v[1]) * time.Millisecond, nil
}

// Succeeded forgets the account's attempts and gives the address its
// attempt back: colleagues behind one address are limited by failures only.
func (l *LoginLimiter) Succeeded(ctx context.Context, user, ip string) {
	acct, addr := l.keys(user, ip)
	if l.client != nil {
		p := l.client.Pipeline()
		p.Del(ctx, acct)
		p.Decr(ctx, addr)
		_, _ = p.Exec(ctx)
	}
	l.mu.Lock()
	delete(l.local, acct)
	if c, ok := l.local[addr]; ok && c.n > 0 {
		c.n--
		l.local[addr] = c
	}
	l.mu.Unlock()
}

// localIncr is Attempt's in-process fallback while Redis is unreachable;
// expired windows are pruned as they are met, and the map is bounded.
func (l *LoginLimiter) localIncr(key string) (int, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	c := l.local[key]
	if now.After(c.reset) {
		if len(l.local) >= maxLocalCounts {
			for k, v := range l.local {
				if now.After(v.reset) {
					delete(l.local, k)
				}
			}
		}
		c = localCount{reset: now.Add(l.window)}
	}
	c.n++
	if len(l.local) < maxLocalCounts || l.local[key].n > 0 {
		l.local[key] = c
	}
	return c.n, c.reset.Sub(now)
}

const maxLocalCounts = 100000

// SharedSecret returns the signing key replicas share, stored in Redis at
// key and created on first use (SET NX), so sessions and CSRF tokens signed
// by one replica verify on every other.
func SharedSecret(ctx context.Context, client *redis.Client, key string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := client.SetNX(ctx, key, b, 0).Err(); err != nil {
		return nil, err
	}
	v, err := client.Get(ctx, key).Bytes()
	if err != nil {
		return nil, err
	}
	if len(v) < 32 {
		return nil, errors.New("stored signing key " + key + " is shorter than 32 bytes")
	}
	return v, nil
}
