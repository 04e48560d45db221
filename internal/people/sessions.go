package people

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// SessionStore records ended sign-in sessions in Redis (the audit database,
// under keydeck:, which actions refuse to touch), so a sign-out on one
// replica ends the session on every replica. Two records:
//
//   - keydeck:session:revoked:{id} — one ended session (the cookie's
//     nonce), kept for the session's remaining life;
//   - keydeck:session:user:{name} — "sessions of this user issued at or
//     before this epoch-ms time are void" (sign out everywhere), kept for
//     the longest a session can last.
//
// Checks are cached for a second, so a page with many requests, or many
// open websockets, costs one MGET per session per second at most. What this
// replica itself ended is remembered in memory as well, so it stays ended
// here even while Redis cannot be read.
type SessionStore struct {
	client *redis.Client
	prefix string
	fresh  time.Duration
	now    func() time.Time

	mu sync.Mutex
	// downUntil: Redis failed a read; until then reads do not try again
	// (an outage must not add a timeout to every request).
	downUntil time.Time
	downErr   error
	checked   map[string]sessionFacts // user \x00 id → what Redis said, and when
	ended     map[string]time.Time    // ids ended here → until when to remember
	cutoffs   map[string]userCutoff   // users signed out everywhere from here
}

type sessionFacts struct {
	revoked bool
	cutoff  int64 // epoch ms; 0 = none
	at      time.Time
}

type userCutoff struct {
	ms    int64
	until time.Time
}

// maxSessionMemory bounds each in-memory map; entries past their use are
// pruned first.
const maxSessionMemory = 100000

// NewSessionStore keeps session records through client.
func NewSessionStore(client *redis.Client, opts ...Option) *SessionStore {
	return &SessionStore{
		client: client, prefix: "keydeck:session:", fresh: time.Second, now: clockOf(opts).Now,
		checked: map[string]sessionFacts{}, ended: map[string]time.Time{}, cutoffs: map[string]userCutoff{},
	}
}

var errNoStore = errors.New("no session store")

// Revoke ends the session id, which would expire at expires. It returns an
// error, and records nothing, when Redis cannot store it: the caller must
// not tell the user the session is over.
func (s *SessionStore) Revoke(ctx context.Context, id string, expires time.Time) error {
	left := expires.Sub(s.now())
	if left <= 0 {
		return nil // over already
	}
	if s.client == nil {
		return errNoStore
	}
	if err := s.client.Set(ctx, s.prefix+"revoked:"+id, "1", max(left, time.Millisecond)).Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prune(s.ended, func(until time.Time) bool { return s.now().After(until) })
	if len(s.ended) < maxSessionMemory {
		s.ended[id] = expires
	}
	suffix := "\x00" + id
	for k, f := range s.checked {
		if len(k) > len(suffix) && k[len(k)-len(suffix):] == suffix {
			f.revoked = true
			s.checked[k] = f
		}
	}
	return nil
}

// raiseCutoff sets the user's cutoff unless a later one is already there
// (replicas' clocks differ a little; a cutoff never moves back).
var raiseCutoff = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tonumber(ARGV[1]) > cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1`)

// RevokeUser voids every session of user issued at or before at; sessions
// last at most maxAge, so the record is kept that long. Like Revoke, it
// records nothing and returns an error when Redis cannot store it.
func (s *SessionStore) RevokeUser(ctx context.Context, user string, at time.Time, maxAge time.Duration) error {
	if s.client == nil {
		return errNoStore
	}
	ms := at.UnixMilli()
	if err := raiseCutoff.Run(ctx, s.client, []string{s.prefix + "user:" + user}, ms, maxAge.Milliseconds()).Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prune(s.cutoffs, func(c userCutoff) bool { return s.now().After(c.until) })
	if c := s.cutoffs[user]; c.ms < ms && len(s.cutoffs) < maxSessionMemory {
		s.cutoffs[user] = userCutoff{ms: ms, until: at.Add(maxAge)}
	}
	prefix := user + "\x00"
	for k, f := range s.checked {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix && f.cutoff < ms {
			f.cutoff = ms
			s.checked[k] = f
		}
	}
	return nil
}

// Revoked reports whether the session id of user, issued at issued, has
// been ended (by a sign-out, or by a sign-out-everywhere after it was
// issued). When Redis cannot be read it answers from what this replica
// knows and returns the error too: the caller decides what an unverifiable
// session is worth.
func (s *SessionStore) Revoked(ctx context.Context, user, id string, issued time.Time) (bool, error) {
	key := user + "\x00" + id
	now := s.now()
	s.mu.Lock()
	local := s.localLocked(user, id, issued)
	f, ok := s.checked[key]
	down, downErr := now.Before(s.downUntil), s.downErr
	s.mu.Unlock()
	if local {
		return true, nil
	}
	if ok && now.Sub(f.at) < s.fresh {
		return f.revoked || issued.UnixMilli() <= f.cutoff, nil
	}
	if s.client == nil {
		return false, errNoStore
	}
	if down {
		return false, downErr
	}
	vals, err := s.client.MGet(ctx, s.prefix+"revoked:"+id, s.prefix+"user:"+user).Result()
	if err == nil && len(vals) != 2 {
		err = errors.New("unexpected reply to MGET")
	}
	if err != nil {
		err = fmt.Errorf("session store: %w", err)
		if !errors.Is(err, context.Canceled) { // the caller gave up; Redis may be fine
			s.mu.Lock()
			s.downUntil, s.downErr = now.Add(s.fresh), err
			s.mu.Unlock()
		}
		return false, err
	}
	f = sessionFacts{revoked: vals[0] != nil, at: now}
	if v, ok := vals[1].(string); ok {
		f.cutoff, _ = strconv.ParseInt(v, 10, 64)
	}
	s.mu.Lock()
	if len(s.checked) >= maxSessionMemory {
		prune(s.checked, func(f sessionFacts) bool { return now.Sub(f.at) >= s.fresh })
	}
	if len(s.checked) < maxSessionMemory {
		s.checked[key] = f
	}
	s.mu.Unlock()
	return f.revoked || issued.UnixMilli() <= f.cutoff, nil
}

// localLocked is what this replica ended itself.
func (s *SessionStore) localLocked(user, id string, issued time.Time) bool {
	if _, ok := s.ended[id]; ok {
		return true
	}
	c, ok := s.cutoffs[user]
	return ok && issued.UnixMilli() <= c.ms
}

// prune deletes the entries gone reports, when the map is full.
func prune[K comparable, V any](m map[K]V, gone func(V) bool) {
	if len(m) < maxSessionMemory {
		return
	}
	for k, v := range m {
		if gone(v) {
			delete(m, k)
		}
	}
}
