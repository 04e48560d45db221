package redisview

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

// fixed window: the TTL is set by the first failure only.
var incrWindow = redis.NewScript(`local n = redis.call('INCR', KEYS[1]); if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end; return {n, redis.call('PTTL', KEYS[1])}`)

func (l *LoginLimiter) keys(user, ip string) (acct, addr string) {
	return l.prefix + "user:" + user, l.prefix + "ip:" + ip
}

// Blocked reports how long the account or address must wait; 0 means it may try.
func (l *LoginLimiter) Blocked(ctx context.Context, user, ip string) time.Duration {
	acct, addr := l.keys(user, ip)
	var wait time.Duration
	for _, k := range []struct {
		key   string
		limit int
	}{{acct, l.perAccount}, {addr, l.perIP}} {
		n, ttl, err := l.read(ctx, k.key)
		if err != nil {
			n, ttl = l.localRead(k.key)
		}
		if n >= k.limit {
			wait = max(wait, ttl)
		}
	}
	return wait
}

func (l *LoginLimiter) read(ctx context.Context, key string) (int, time.Duration, error) {
	if l.client == nil {
		return 0, 0, errors.New("no store")
	}
	p := l.client.Pipeline()
	get := p.Get(ctx, key)
	ttl := p.PTTL(ctx, key)
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, err
	}
	n, _ := get.Int()
	d, _ := ttl.Result()
	return n, max(d, time.Second), nil
}

// Failed records a failed attempt for both the account and the address.
func (l *LoginLimiter) Failed(ctx context.Context, user, ip string) {
	acct, addr := l.keys(user, ip)
	for _, k := range []string{acct, addr} {
		if l.client == nil || incrWindow.Run(ctx, l.client, []string{k}, l.window.Milliseconds()).Err() != nil {
			l.localFail(k)
		}
	}
}

// Succeeded clears the account's failures (the address keeps its count).
func (l *LoginLimiter) Succeeded(ctx context.Context, user string) {
	acct, _ := l.keys(user, "")
	if l.client != nil {
		l.client.Del(ctx, acct)
	}
	l.mu.Lock()
	delete(l.local, acct)
	l.mu.Unlock()
}

func (l *LoginLimiter) localRead(key string) (int, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.local[key]
	if time.Now().After(c.reset) {
		return 0, 0
	}
	return c.n, time.Until(c.reset)
}

func (l *LoginLimiter) localFail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.local[key]
	if time.Now().After(c.reset) {
		c = localCount{reset: time.Now().Add(l.window)}
	}
	c.n++
	l.local[key] = c
}

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
