package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// Simulator keeps the demo alive: each Step is one burst of the traffic the
// three systems would see, written with the same commands and scripts the
// real services use, so that every live view of the console has something
// to show. It is not safe for concurrent use; Run drives it from one
// goroutine.
type Simulator struct {
	eisland  func(db int) redis.Cmdable
	gateway  redis.Cmdable
	vertique redis.Cmdable
	rng      *rand.Rand
	now      func() time.Time
	secret   string
	policies []vertiquePolicy

	// Recurring populations: real traffic comes back from the same users
	// and addresses, and fixed pools keep every key family bounded however
	// long the demo runs.
	users, players, ips, callers []string

	locks      []heldLock
	requests   []gatewayRequest
	challenges []challenge
	orders     []pendingOrder
	submits    retained
	sessions   retained
	orderKeys  retained
}

type heldLock struct {
	c          redis.Cmdable
	key, value string
	release    time.Time
}

// retained bounds keys that production keeps for hours or days
// (idempotency guards, sessions, order records). A demo left running for a
// week has no such memory budget, so once more than max are outstanding the
// oldest are deleted, as if their TTL had run out.
type retained struct {
	max  int
	keys [][]string
}

func (r *retained) add(keys ...string) (evicted []string) {
	r.keys = append(r.keys, keys)
	for len(r.keys) > r.max {
		evicted = append(evicted, r.keys[0]...)
		r.keys = r.keys[1:]
	}
	return evicted
}

// NewSimulator returns a simulator writing to the three systems. eisland
// maps a database index to a client for it; now is the clock every written
// timestamp and token-bucket refill is computed from.
func NewSimulator(eisland func(db int) redis.Cmdable, gateway, vertique redis.Cmdable, rng *rand.Rand, now func() time.Time) *Simulator {
	pools := rand.New(rand.NewPCG(0x5173, 1))
	s := &Simulator{eisland: eisland, gateway: gateway, vertique: vertique, rng: rng, now: now,
		secret: DemoSecret, policies: vertiquePolicies(), users: demoUsers()[:120],
		submits: retained{max: 400}, sessions: retained{max: 60}, orderKeys: retained{max: 120}}
	for range 200 {
		s.players = append(s.players, "player_"+hexString(pools, 6))
	}
	for range 150 {
		s.ips = append(s.ips, ip(pools))
	}
	for range 40 {
		s.callers = append(s.callers, "new-"+hexString(pools, 6))
	}
	return s
}

type action struct {
	weight int
	run    func(*Simulator, context.Context, time.Time) error
}

var actions = []action{
	{6, (*Simulator).submitScore},
	{2, (*Simulator).refreshLeaderboard},
	{1, (*Simulator).startSession},
	{4, (*Simulator).createChallenge},
	{3, (*Simulator).verifyChallenge},
	{2, (*Simulator).createOrder},
	{1, (*Simulator).payOrder},
	{4, (*Simulator).failLogin},
	{1, (*Simulator).attemptRegister},
	{5, (*Simulator).callAgent},
	{1, (*Simulator).rechargeAgent},
	{2, (*Simulator).queryWeather},
	{2, (*Simulator).sendEmailCode},
	{1, (*Simulator).verifyTOTP},
	{2, (*Simulator).useNonce},
	{1, (*Simulator).upload},
	{7, (*Simulator).gatewayRequest},
	{1, (*Simulator).gatewayMisc},
	{1, (*Simulator).burst},
	{6, (*Simulator).consumeVertique},
}

var totalWeight = func() int {
	n := 0
	for _, a := range actions {
		n += a.weight
	}
	return n
}()

// Step runs one burst: finishes the work that came due (lock releases,
// gateway reconciliations), refills some caches, then performs a handful
// of random user actions. It returns every error it met; a later Step
// simply carries on.
func (s *Simulator) Step(ctx context.Context) error {
	now := s.now()
	var errs []error
	try := func(err error) {
		if err != nil && !errors.Is(err, redis.Nil) {
			errs = append(errs, err)
		}
	}
	try(s.releaseLocks(ctx, now))
	try(s.reconcileRequests(ctx, now))
	try(s.refillCaches(ctx, now))
	try(s.sliderBotHit(ctx, now))
	for range 3 + s.rng.IntN(4) {
		n := s.rng.IntN(totalWeight)
		for _, a := range actions {
			if n -= a.weight; n < 0 {
				try(a.run(s, ctx, now))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// Run calls Step about every interval until ctx ends. Errors are dropped on
// purpose: a server that is down now is simply tried again next time.
func (s *Simulator) Run(ctx context.Context, every time.Duration) {
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		stepCtx, cancel := context.WithTimeout(ctx, 4*every)
		_ = s.Step(stepCtx)
		cancel()
		// jitter keeps the traffic from looking like a metronome
		t.Reset(every*3/4 + time.Duration(s.rng.Int64N(int64(every)/2+1)))
	}
}

func (s *Simulator) db(n int) redis.Cmdable { return s.eisland(n) }

func (s *Simulator) pickUser() string { return pick(s.rng, s.users) }

func (s *Simulator) pickIP() string { return pick(s.rng, s.ips) }

// forget deletes keys evicted from a retained ring.
func (s *Simulator) forget(ctx context.Context, c redis.Cmdable, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return c.Del(ctx, keys...).Err()
}

// takeLock is SET NX PX with the holder's value; the release is scheduled,
// and now and then never happens, as when a holder crashes and the TTL
// frees the lock instead.
func (s *Simulator) takeLock(ctx context.Context, c redis.Cmdable, key, value string, ttl, hold time.Duration, now time.Time) (bool, error) {
	ok, err := c.SetNX(ctx, key, value, ttl).Result()
	if err != nil || !ok {
		return false, err
	}
	if s.rng.IntN(10) != 0 && len(s.locks) < 100 {
		s.locks = append(s.locks, heldLock{c: c, key: key, value: value, release: now.Add(hold)})
	}
	return true, nil
}

// releaseLocks frees the locks whose holders are done, with
// compare-and-delete so a lock that expired and was retaken by someone else
// is left alone.
func (s *Simulator) releaseLocks(ctx context.Context, now time.Time) error {
	var errs []error
	kept := s.locks[:0]
	for _, l := range s.locks {
		if now.Before(l.release) {
			kept = append(kept, l)
			continue
		}
		errs = append(errs, compareAndDelete.Run(ctx, l.c, []string{l.key}, l.value).Err())
	}
	s.locks = kept
	return errors.Join(errs...)
}

// refillCaches rewrites cache entries as reads would miss them, so every
// cache family stays populated while TTLs run out.
func (s *Simulator) refillCaches(ctx context.Context, now time.Time) error {
	type write struct {
		db int
		e  entry
	}
	var ws []write
	for range 2 {
		ws = append(ws, write{3, wallpaperEntry(s.rng, s.users)})
	}
	switch s.rng.IntN(6) {
	case 0:
		ws = append(ws, write{0, pick(s.rng, defaultCacheEntries(s.rng, now))})
	case 1:
		u := s.pickUser()
		ws = append(ws, write{1, entry{"server:avatar-data::" + u, js(avatarValue(s.rng, u)), 5 * time.Minute}})
	case 2:
		k, v, ttl := weatherEntry(s.rng, now)
		ws = append(ws, write{11, entry{k, v, ttl}})
	case 3:
		ws = append(ws, write{13, pricingEntry(s.rng)})
	case 4:
		ws = append(ws, write{2, entry{"identity:verified:" + s.pickUser(), fmt.Sprint(min(1, s.rng.IntN(5))), time.Hour}})
	case 5:
		ws = append(ws, write{5, entry{"totp:security:secret:enc:" + s.pickUser(), totpCiphertext(s.rng), 24 * time.Hour}})
	}
	var errs []error
	for _, w := range ws {
		errs = append(errs, s.db(w.db).Set(ctx, w.e.key, w.e.value, w.e.ttl).Err())
	}
	return errors.Join(errs...)
}

// addMonthly is a quota counter that expires when its month ends.
func (s *Simulator) addMonthly(ctx context.Context, c redis.Cmdable, key string, n int64, now time.Time) error {
	if err := c.IncrBy(ctx, key, n).Err(); err != nil {
		return err
	}
	return c.PExpire(ctx, key, endOfMonth(now).Sub(now)).Err()
}

// windowCount is a fixed-window counter through the mini-game script; the
// other eIsland counters behave the same (TTL from the first hit only).
func (s *Simulator) windowCount(ctx context.Context, c redis.Cmdable, key string, window int) (int64, error) {
	return RateLimitIncrExpire.Run(ctx, c, []string{key}, window).Int64()
}
