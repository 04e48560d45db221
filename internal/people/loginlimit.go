package people

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// LoginPolicy is how many sign-in attempts are allowed, and how fast.
// Every count is a fixed window of Window, started by its first attempt.
type LoginPolicy struct {
	// PerPair attempts per (account, client address): past it that address
	// is locked out of that account, and of no other, until the window
	// ends. Guessing from one address cannot lock the owner out.
	PerPair int
	// PerAddr attempts per client address, whatever the accounts: past it
	// the address is locked out of every account.
	PerAddr int
	Window  time.Duration
	// SlowAfter admitted attempts on an account, from any addresses, each
	// further one takes the account's next time slot: SlowStep after the
	// previous slot (or now, if that has passed), the step doubling per
	// attempt up to SlowCap, and its password is checked only then. Slots
	// are handed out one after another, so attempts made in parallel queue
	// rather than all wait one delay at once. An attempt whose slot would
	// be more than SlowQueue away (0: no bound) is refused as busy, which
	// is not a lock-out and counts nowhere: a right password from an
	// address not locked out gets in within SlowQueue, or is told to try
	// again shortly.
	SlowAfter                    int
	SlowStep, SlowCap, SlowQueue time.Duration
}

// DefaultLoginPolicy: 5 attempts per account and address and 20 per
// address in 15 minutes; from the 6th attempt on an account in that time,
// slots 0.25 s, 0.5 s, 1 s, 2 s, then 3 s apart, queued at most 10 s ahead.
var DefaultLoginPolicy = LoginPolicy{PerPair: 5, PerAddr: 20, Window: 15 * time.Minute,
	SlowAfter: 5, SlowStep: 250 * time.Millisecond, SlowCap: 3 * time.Second, SlowQueue: 10 * time.Second}

// Verdict is what Attempt decided.
type Verdict struct {
	// Wait > 0: refused, the pair or the address is locked out for Wait.
	Wait time.Duration
	// Delay is the slow-down Attempt waited before answering: until the
	// account's time slot this attempt took.
	Delay time.Duration
	// Busy: refused (Wait > 0 is when to try again) because the account's
	// queue of slowed-down attempts is full. Not a lock-out; not counted.
	Busy bool
	// LastForPair (LastForAddr): this attempt was the last the pair (the
	// address) has in its window; if it fails, the pair (the address) is
	// locked out until PairUntil (AddrUntil).
	LastForPair, LastForAddr bool
	PairUntil, AddrUntil     time.Time
}

// Lockout is a client address locked out of an account (User ""
// means of every account) until Until.
type Lockout struct {
	User, Addr string
	Until      time.Time
}

// counts is one attempt's place in each window: n is its ordinal, left
// the window's time left; acct is 0 when the attempt was refused (a
// refused attempt does not slow the account down further). slot is the
// wait until the account's time slot the attempt took; busy > 0 means
// the queue was full (and nothing was counted): room in busy.
type counts struct {
	pair, addr         int
	pairLeft, addrLeft time.Duration
	acct               int
	slot, busy         time.Duration
}

// decide is the policy applied to an attempt's counts.
func (p LoginPolicy) decide(c counts, now time.Time) Verdict {
	var v Verdict
	if c.busy > 0 {
		return Verdict{Busy: true, Wait: max(c.busy, time.Second)}
	}
	if c.pair > p.PerPair {
		v.Wait = max(v.Wait, c.pairLeft, time.Second)
	}
	if c.addr > p.PerAddr {
		v.Wait = max(v.Wait, c.addrLeft, time.Second)
	}
	if v.Wait > 0 {
		return v
	}
	v.LastForPair, v.PairUntil = c.pair == p.PerPair, now.Add(c.pairLeft)
	v.LastForAddr, v.AddrUntil = c.addr == p.PerAddr, now.Add(c.addrLeft)
	v.Delay = c.slot
	return v
}

// slowDown is the step from the previous slot to the account's n-th
// admitted attempt's.
func (p LoginPolicy) slowDown(n int) time.Duration {
	over := n - p.SlowAfter
	if over <= 0 || p.SlowStep <= 0 {
		return 0
	}
	d := p.SlowStep
	for i := 1; i < over && d < p.SlowCap; i++ {
		d *= 2
	}
	return min(d, p.SlowCap)
}

// LoginLimiter counts sign-in attempts in Redis, so several Keydeck
// replicas enforce one limit and list the same lock-outs. When Redis cannot
// be reached it falls back to counting in this process, which still stops
// a guessing attack against this replica.
type LoginLimiter struct {
	client *redis.Client
	prefix string
	policy LoginPolicy
	// now and sleep are the clock; tests set them.
	now   func() time.Time
	sleep func(context.Context, time.Duration)

	mu    sync.Mutex
	local map[string]localCount
	// flights are this process's token lookups in flight per address
	// (tokenguess.go), guarded by mu.
	flights map[string][]flight
}

type localCount struct {
	n     int
	reset time.Time
	slot  time.Time // the account's next time slot (its nextKey entry)
}

// NewLoginLimiter keeps its counts through client (nil: in this process).
func NewLoginLimiter(client *redis.Client, p LoginPolicy, opts ...Option) *LoginLimiter {
	clk := clockOf(opts)
	return &LoginLimiter{client: client, prefix: "keydeck:login:", policy: p, now: clk.Now, sleep: sleeper(clk),
		local: map[string]localCount{}}
}

// member names a lock-out in the index: the address, NUL, the account (an
// address holds no NUL; an account name may hold anything).
func member(user, addr string) string { return addr + "\x00" + user }

func (l *LoginLimiter) keys(user, addr string) (pair, ad, acct, index string) {
	return l.prefix + "pair:" + member(user, addr), l.prefix + "addr:" + addr, l.prefix + "acct:" + user, l.prefix + "lockouts"
}

// nextKey holds the account's next free time slot (epoch ms).
func (l *LoginLimiter) nextKey(user string) string { return l.prefix + "next:" + user }

// maxLockouts bounds the lock-out index; past it the soonest-ending
// entries are dropped from the list (their lock-outs stay in force).
const maxLockouts = 10000

// attempt counts one attempt in each window (the TTL is set by a window's
// first attempt only) and counts it against the account only when neither
// the pair nor the address is over its limit. Past SlowAfter the attempt
// takes the account's next time slot (KEYS[5]); when that slot is more
// than the queue's bound away the attempt is refused as busy and every
// count it made is taken back. Otherwise the pair (the address) is indexed
// once it reaches its limit, until its window ends.
var attempt = redis.NewScript(`
local function hit(k)
  local n = redis.call('INCR', k)
  if n == 1 then redis.call('PEXPIRE', k, ARGV[1]) end
  local t = redis.call('PTTL', k)
  if t < 0 then redis.call('PEXPIRE', k, ARGV[1]); t = tonumber(ARGV[1]) end
  return n, t
end
local pn, pt = hit(KEYS[1])
local an, at = hit(KEYS[2])
local now = tonumber(ARGV[4])
local cn, slot = 0, 0
if pn <= tonumber(ARGV[2]) and an <= tonumber(ARGV[3]) then
  cn = redis.call('INCR', KEYS[3])
  if cn == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[1]) end
  local over = cn - tonumber(ARGV[8])
  local step, cap, bound = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
  if over > 0 and step > 0 then
    local d = step
    local i = 1
    while i < over and d < cap do d = d * 2; i = i + 1 end
    if d > cap then d = cap end
    local at_ = math.max(now, tonumber(redis.call('GET', KEYS[5]) or '0')) + d
    if bound > 0 and at_ - now > bound then
      redis.call('DECR', KEYS[1]); redis.call('DECR', KEYS[2]); redis.call('DECR', KEYS[3])
      return {0, 0, 0, 0, 0, 0, at_ - now - bound}
    end
    redis.call('SET', KEYS[5], at_, 'PX', ARGV[1])
    slot = at_ - now
  end
end
local function index(m, left)
  redis.call('ZADD', KEYS[4], now + left, m)
  redis.call('PEXPIRE', KEYS[4], ARGV[1])
  if redis.call('ZCARD', KEYS[4]) > tonumber(ARGV[7]) then
    redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -(tonumber(ARGV[7]) + 1))
  end
end
if pn >= tonumber(ARGV[2]) then index(ARGV[5], pt) end
if an >= tonumber(ARGV[3]) then index(ARGV[6], at) end
return {pn, pt, an, at, cn, slot, 0}`)

// Attempt reserves one sign-in attempt for the account from the address
// before the password is checked, so parallel guesses cannot all slip past
// a check made before any of them failed. A refused attempt has a Wait; an
// admitted one returns after its slow-down Delay (or when ctx ends).
func (l *LoginLimiter) Attempt(ctx context.Context, user, addr string) Verdict {
	now := l.now()
	c, err := l.count(ctx, user, addr, now)
	if err != nil {
		c = l.localCount(user, addr, now)
	}
	v := l.policy.decide(c, now)
	if v.Wait == 0 && v.Delay > 0 {
		l.sleep(ctx, v.Delay)
	}
	return v
}

func (l *LoginLimiter) count(ctx context.Context, user, addr string, now time.Time) (counts, error) {
	if l.client == nil {
		return counts{}, errors.New("no store")
	}
	pair, ad, acct, index := l.keys(user, addr)
	p := l.policy
	v, err := attempt.Run(ctx, l.client, []string{pair, ad, acct, index, l.nextKey(user)},
		p.Window.Milliseconds(), p.PerPair, p.PerAddr, now.UnixMilli(), member(user, addr), member("", addr), maxLockouts,
		p.SlowAfter, p.SlowStep.Milliseconds(), p.SlowCap.Milliseconds(), p.SlowQueue.Milliseconds()).Int64Slice()
	if err != nil || len(v) != 7 {
		return counts{}, errors.Join(err, errors.New("unexpected reply"))
	}
	ms := func(x int64) time.Duration { return time.Duration(x) * time.Millisecond }
	return counts{pair: int(v[0]), pairLeft: ms(v[1]), addr: int(v[2]), addrLeft: ms(v[3]), acct: int(v[4]), slot: ms(v[5]), busy: ms(v[6])}, nil
}

// Locked tells how long addr is still locked out of user (its pair over
// PerPair) or of every account (over PerAddr), reading the counts without
// adding to them; with Redis unreadable, from this process's own counts.
func (l *LoginLimiter) Locked(ctx context.Context, user, addr string) time.Duration {
	pair, ad, _, _ := l.keys(user, addr)
	n, left := [2]int64{}, [2]time.Duration{}
	err := errors.New("no store")
	if l.client != nil {
		p := l.client.Pipeline()
		gp, tp, ga, ta := p.Get(ctx, pair), p.PTTL(ctx, pair), p.Get(ctx, ad), p.PTTL(ctx, ad)
		if _, err = p.Exec(ctx); err == nil || errors.Is(err, redis.Nil) {
			err = nil
			n[0], _ = gp.Int64()
			n[1], _ = ga.Int64()
			left[0], left[1] = tp.Val(), ta.Val()
		}
	}
	if err != nil {
		now := l.now()
		l.mu.Lock()
		for i, k := range []string{pair, ad} {
			if c, ok := l.local[k]; ok && now.Before(c.reset) {
				n[i], left[i] = int64(c.n), c.reset.Sub(now)
			}
		}
		l.mu.Unlock()
	}
	var wait time.Duration
	if n[0] >= int64(l.policy.PerPair) {
		wait = max(wait, left[0], time.Second)
	}
	if n[1] >= int64(l.policy.PerAddr) {
		wait = max(wait, left[1], time.Second)
	}
	return wait
}

// succeeded forgets the pair and the account's slow-down (KEYS 1, 3, 5)
// and the pair's index entry, and gives the address (KEYS[2]) its attempt
// back only while its count exists (a DECR of an expired count would make
// a -1 that never expires); an address back under its limit is taken off
// the index too, since the attempt that reached the limit did not fail.
var succeeded = redis.NewScript(`
redis.call('DEL', KEYS[1], KEYS[3], KEYS[5])
redis.call('ZREM', KEYS[4], ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 1 then
  local n = redis.call('DECR', KEYS[2])
  if n < tonumber(ARGV[3]) then redis.call('ZREM', KEYS[4], ARGV[2]) end
end
return 0`)

// Succeeded forgets the pair's attempts and the account's slow-down, and
// gives the address its attempt back: colleagues behind one address are
// limited by failures only. Lock-outs of the account from other addresses
// stay.
func (l *LoginLimiter) Succeeded(ctx context.Context, user, addr string) {
	pair, ad, acct, index := l.keys(user, addr)
	if l.client != nil {
		_ = succeeded.Run(ctx, l.client, []string{pair, ad, acct, index, l.nextKey(user)},
			member(user, addr), member("", addr), l.policy.PerAddr).Err()
	}
	l.mu.Lock()
	delete(l.local, pair)
	delete(l.local, acct)
	delete(l.local, l.nextKey(user))
	if c, ok := l.local[ad]; ok && c.n > 0 {
		c.n--
		l.local[ad] = c
	}
	l.mu.Unlock()
}

// Lockouts lists the lock-outs in force, the soonest-ending first, at most
// limit of them, and how many there are in all. When Redis cannot be read
// it returns the error with those this process counts itself meanwhile.
func (l *LoginLimiter) Lockouts(ctx context.Context, limit int) ([]Lockout, int, error) {
	now := l.now()
	var out []Lockout
	total := 0
	var err error
	if l.client != nil {
		_, _, _, index := l.keys("", "")
		p := l.client.Pipeline()
		p.ZRemRangeByScore(ctx, index, "-inf", "("+strconv.FormatInt(now.UnixMilli(), 10))
		rng := p.ZRangeWithScores(ctx, index, 0, int64(limit-1))
		card := p.ZCard(ctx, index)
		if _, err = p.Exec(ctx); err == nil {
			total = int(card.Val())
			for _, z := range rng.Val() {
				m, _ := z.Member.(string)
				addr, user, _ := strings.Cut(m, "\x00")
				out = append(out, Lockout{User: user, Addr: addr, Until: time.UnixMilli(int64(z.Score))})
			}
		}
	} else {
		err = errors.New("no store")
	}
	if err == nil {
		// Redis answered: what this process counted during an outage no
		// longer decides anything.
		return out, total, nil
	}
	l.mu.Lock()
	for k, c := range l.local {
		var lo Lockout
		switch {
		case strings.HasPrefix(k, l.prefix+"pair:") && c.n >= l.policy.PerPair:
			lo.Addr, lo.User, _ = strings.Cut(k[len(l.prefix+"pair:"):], "\x00")
		case strings.HasPrefix(k, l.prefix+"addr:") && c.n >= l.policy.PerAddr:
			lo.Addr = k[len(l.prefix+"addr:"):]
		default:
			continue
		}
		if !now.Before(c.reset) {
			continue
		}
		lo.Until = c.reset
		if !slices.ContainsFunc(out, func(x Lockout) bool { return x.User == lo.User && x.Addr == lo.Addr }) {
			out = append(out, lo)
			total++
		}
	}
	l.mu.Unlock()
	slices.SortStableFunc(out, func(a, b Lockout) int { return a.Until.Compare(b.Until) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, total, err
}

// Clear ends a lock-out: the address's attempts on the account (user ""
// : the address's attempts on every account) are forgotten, here and in
// Redis. It fails, and the lock-out may stay, when Redis cannot be written.
func (l *LoginLimiter) Clear(ctx context.Context, user, addr string) error {
	pair, ad, _, index := l.keys(user, addr)
	key := pair
	if user == "" {
		key = ad
	}
	l.mu.Lock()
	delete(l.local, key)
	l.mu.Unlock()
	if l.client == nil {
		return nil
	}
	p := l.client.TxPipeline()
	p.Del(ctx, key)
	p.ZRem(ctx, index, member(user, addr))
	_, err := p.Exec(ctx)
	return err
}

// localCount is Attempt's in-process fallback while Redis is unreachable.
func (l *LoginLimiter) localCount(user, addr string, now time.Time) counts {
	pair, ad, acct, _ := l.keys(user, addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	var c counts
	c.pair, c.pairLeft = l.localIncr(pair, now)
	c.addr, c.addrLeft = l.localIncr(ad, now)
	if c.pair <= l.policy.PerPair && c.addr <= l.policy.PerAddr {
		c.acct, _ = l.localIncr(acct, now)
		if d := l.policy.slowDown(c.acct); d > 0 {
			nk := l.nextKey(user)
			at := now
			if prev := l.local[nk].slot; prev.After(now) {
				at = prev
			}
			at = at.Add(d)
			if q := l.policy.SlowQueue; q > 0 && at.Sub(now) > q {
				for _, k := range []string{pair, ad, acct} {
					if x, ok := l.local[k]; ok && x.n > 0 {
						x.n--
						l.local[k] = x
					}
				}
				return counts{busy: at.Sub(now) - q}
			}
			l.local[nk] = localCount{n: 1, reset: now.Add(l.policy.Window), slot: at}
			c.slot = at.Sub(now)
		}
	}
	return c
}

// localIncr counts in the fallback map (l.mu held); expired windows are
// pruned as they are met, and the map is bounded.
func (l *LoginLimiter) localIncr(key string, now time.Time) (int, time.Duration) {
	c := l.local[key]
	if !now.Before(c.reset) {
		if len(l.local) >= maxLocalCounts {
			for k, v := range l.local {
				if !now.Before(v.reset) {
					delete(l.local, k)
				}
			}
		}
		c = localCount{reset: now.Add(l.policy.Window)}
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
