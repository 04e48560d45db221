package people

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/action"
)

// TokenPrefix starts every API token, so that a leaked one is recognisable
// (secret scanners, logs) and a bearer header can tell it is Keydeck's.
const TokenPrefix = "kdt_"

// tokenBytes is the random part of a token: 256 bits, beyond guessing.
const tokenBytes = 32

// MaxTokensPerOwner bounds the tokens one person holds at once.
const MaxTokensPerOwner = 50

// lastUseEvery is how often a token's last use is written: at most once a
// minute per token, however many requests it makes.
const lastUseEvery = time.Minute

// Errors of the token store.
var (
	// ErrTokenUnknown: the token is not one of ours, expired or revoked.
	ErrTokenUnknown = errors.New("the API token is unknown, expired or revoked")
	ErrTokenExists  = errors.New("you already have a token of that name")
	// ErrTokenExistsDead: the owner's token of that name no longer works
	// (Dead) but keeps its name until it is revoked.
	ErrTokenExistsDead = errors.New("you have a token of that name that no longer works")
	ErrTokensFull      = fmt.Errorf("you hold %d tokens already; revoke one first", MaxTokensPerOwner)
	ErrTokenLevel      = errors.New("a token's role may not exceed its owner's")
)

// Token is what the store knows of an API token: never its secret.
type Token struct {
	Name, Owner string
	Level       action.Level
	Created     time.Time
	Expires     time.Time // zero: never
	LastUsed    time.Time // zero: never used
	// binding is the owner's account as it was when the token was made
	// (User.tokenBinding): a token outlives neither its owner's password
	// nor the account's re-creation. "" for a token made before tokens
	// were bound (Legacy): such a token is dead.
	binding string
	// digest names the token's record (set by Resolve).
	digest string
}

// TokenStore keeps API tokens in the audit Redis beside the sessions'
// revocations, under keydeck: (which actions refuse to touch):
//
//   - keydeck:token:{sha256 of the token, hex} — a hash: name, owner,
//     level, created, expires, last_used (epoch ms; 0 none), binding (the
//     owner's account when it was made: User.tokenBinding), expiring with
//     the token;
//   - keydeck:tokens:{owner} — a hash of the owner's token names to their
//     digests (entries whose token is gone are pruned as they are met).
//
// Only the digest is stored: the token is shown once, when created. Every
// request's token is looked up in Redis, without a cache: tokens serve
// scripts, whose requests are few, so one round trip each is cheap, and a
// revoked (or expired) token is refused by every replica from the very
// next request, with no cache to invalidate. When the store cannot be
// read, tokens are refused (a token is nothing but its record).
type TokenStore struct {
	client *redis.Client
	prefix string
	now    func() time.Time
}

// NewTokenStore keeps tokens through client (the audit Redis).
func NewTokenStore(client *redis.Client, opts ...Option) *TokenStore {
	return &TokenStore{client: client, prefix: "keydeck:", now: clockOf(opts).Now}
}

func (s *TokenStore) tokenKey(digest string) string { return s.prefix + "token:" + digest }
func (s *TokenStore) ownerKey(owner string) string  { return s.prefix + "tokens:" + owner }

// digest is the hex SHA-256 of a token: a fast hash is right for a secret
// of 256 random bits (no dictionary to try).
func digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// wellFormed tells a token's shape: the prefix, then 32 bytes base64url.
func wellFormed(secret string) bool {
	body, ok := strings.CutPrefix(secret, TokenPrefix)
	if !ok || len(body) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	return err == nil && len(b) == tokenBytes
}

// createToken stores a token unless its owner has a live one of that name
// or holds the most live ones; the owner's index is pruned of tokens gone
// meanwhile. A token is live when it is bound to the owner's present
// account (ARGV[9]); a dead one (made for another password, or legacy: no
// binding) does not count toward the limit, but keeps its name until it is
// revoked ('dead'): this replica's users file may be behind another's, on
// which it is live, so it is never deleted here.
// KEYS: token, index; ARGV: name, owner, level, created, expires, max,
// token key prefix, digest, binding.
var createToken = redis.NewScript(`
local function state(d)
  local v = redis.call('HMGET', ARGV[7] .. d, 'name', 'binding')
  if not v[1] then return 'gone' end
  if v[2] and v[2] == ARGV[9] then return 'live' end
  return 'dead'
end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur then
  local st = state(cur)
  if st ~= 'gone' then return st == 'live' and 'exists' or 'dead' end
end
local all = redis.call('HGETALL', KEYS[2])
local n = 0
for i = 1, #all, 2 do
  local st = state(all[i+1])
  if st == 'live' then n = n + 1 elseif st == 'gone' then redis.call('HDEL', KEYS[2], all[i]) end
end
if n >= tonumber(ARGV[6]) then return 'full' end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'owner', ARGV[2], 'level', ARGV[3], 'created', ARGV[4], 'expires', ARGV[5], 'last_used', '0', 'binding', ARGV[9])
if tonumber(ARGV[5]) > 0 then redis.call('PEXPIREAT', KEYS[1], ARGV[5]) end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[8])
return 'ok'`)

// Create issues a token named name for owner, at level (at most the
// owner's), expiring at expires (zero: never). The secret it returns is
// the only copy: show it once.
func (s *TokenStore) Create(ctx context.Context, owner User, name string, level action.Level, expires time.Time) (string, Token, error) {
	if err := ValidTokenName(name); err != nil {
		return "", Token{}, err
	}
	if !owner.Level.Allows(level) {
		return "", Token{}, fmt.Errorf("%w: %s is %s", ErrTokenLevel, owner.Name, owner.Level)
	}
	now := s.now()
	if !expires.IsZero() && !expires.After(now) {
		return "", Token{}, errors.New("the expiry is in the past")
	}
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", Token{}, err
	}
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	d := digest(secret)
	res, err := createToken.Run(ctx, s.client, []string{s.tokenKey(d), s.ownerKey(owner.Name)},
		name, owner.Name, level.String(), now.UnixMilli(), msOrZero(expires), MaxTokensPerOwner, s.tokenKey(""), d, owner.tokenBinding()).Text()
	switch {
	case err != nil:
		return "", Token{}, fmt.Errorf("token store: %w", err)
	case res == "exists":
		return "", Token{}, ErrTokenExists
	case res == "dead":
		return "", Token{}, ErrTokenExistsDead
	case res == "full":
		return "", Token{}, ErrTokensFull
	}
	return secret, Token{Name: name, Owner: owner.Name, Level: level, Created: time.UnixMilli(now.UnixMilli()), Expires: fromMs(msOrZero(expires)),
		binding: owner.tokenBinding()}, nil
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMs(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// lookupToken reads a token's record unless it expired, and writes its
// last use when the one stored is older than ARGV[2] ms.
var lookupToken = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'name', 'owner', 'level', 'created', 'expires', 'last_used', 'binding')
if not v[1] then return false end
v[7] = v[7] or ''
local now = tonumber(ARGV[1])
local exp = tonumber(v[5]) or 0
if exp > 0 and exp <= now then return false end
if now - (tonumber(v[6]) or 0) >= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'last_used', ARGV[1])
  v[6] = ARGV[1]
end
return v`)

// Resolve looks a presented token up: ErrTokenUnknown when it is not one
// of ours (malformed, never issued, expired or revoked), another error
// when the store cannot be read. It records the use (at most once a
// minute per token).
func (s *TokenStore) Resolve(ctx context.Context, secret string) (Token, error) {
	if !wellFormed(secret) {
		return Token{}, ErrTokenUnknown
	}
	now := s.now()
	v, err := lookupToken.Run(ctx, s.client, []string{s.tokenKey(digest(secret))}, now.UnixMilli(), lastUseEvery.Milliseconds()).StringSlice()
	if errors.Is(err, redis.Nil) {
		return Token{}, ErrTokenUnknown
	}
	if err != nil || len(v) != tokenFields {
		return Token{}, errors.Join(errors.New("token store unreadable"), err)
	}
	t, err := parseToken(v)
	t.digest = digest(secret)
	return t, err
}

// tokenFields is how many fields a token's record is read as.
const tokenFields = 7

// parseToken reads name, owner, level, created, expires, last_used,
// binding.
func parseToken(v []string) (Token, error) {
	lvl, err := action.ParseLevel(v[2])
	if err != nil {
		return Token{}, err
	}
	ms := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	return Token{Name: v[0], Owner: v[1], Level: lvl, Created: fromMs(ms(v[3])), Expires: fromMs(ms(v[4])), LastUsed: fromMs(ms(v[5])), binding: v[6]}, nil
}

// listTokens returns each live token's fields (seven per token), pruning
// the owner's index of tokens gone. KEYS: index; ARGV: token key prefix,
// now.
var listTokens = redis.NewScript(`
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local v = redis.call('HMGET', ARGV[1] .. all[i+1], 'name', 'owner', 'level', 'created', 'expires', 'last_used', 'binding')
  local exp = tonumber(v[5]) or 0
  if not v[1] or (exp > 0 and exp <= tonumber(ARGV[2])) then
    redis.call('HDEL', KEYS[1], all[i])
  else
    v[7] = v[7] or ''
    for j = 1, 7 do out[#out + 1] = v[j] end
  end
end
return out`)

// List is owner's tokens not expired nor revoked, the newest first: dead
// ones (Token.Dead) included, for the caller to tell.
func (s *TokenStore) List(ctx context.Context, owner string) ([]Token, error) {
	v, err := listTokens.Run(ctx, s.client, []string{s.ownerKey(owner)}, s.tokenKey(""), s.now().UnixMilli()).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	var out []Token
	for i := 0; i+tokenFields <= len(v); i += tokenFields {
		t, err := parseToken(v[i : i+tokenFields])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b Token) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// revokeToken deletes owner's token of a name. KEYS: index; ARGV: name,
// token key prefix.
var revokeToken = redis.NewScript(`
local d = redis.call('HGET', KEYS[1], ARGV[1])
if not d then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return redis.call('DEL', ARGV[2] .. d)`)

// Revoke deletes owner's token called name: from the next request on no
// replica accepts it. ErrTokenUnknown when there is none (or it expired).
func (s *TokenStore) Revoke(ctx context.Context, owner, name string) error {
	n, err := revokeToken.Run(ctx, s.client, []string{s.ownerKey(owner)}, name, s.tokenKey("")).Int()
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if n == 0 {
		return ErrTokenUnknown
	}
	return nil
}

// revokeOwner deletes every token of an owner, and the owner's index.
// KEYS: index; ARGV: token key prefix.
var revokeOwner = redis.NewScript(`
local all = redis.call('HGETALL', KEYS[1])
local n = 0
for i = 1, #all, 2 do n = n + redis.call('DEL', ARGV[1] .. all[i+1]) end
redis.call('DEL', KEYS[1])
return n`)

// RevokeOwner deletes every token of owner, on every replica from the
// next request: how many there were.
func (s *TokenStore) RevokeOwner(ctx context.Context, owner string) (int, error) {
	n, err := revokeOwner.Run(ctx, s.client, []string{s.ownerKey(owner)}, s.tokenKey("")).Int()
	if err != nil {
		return 0, fmt.Errorf("token store: %w", err)
	}
	return n, nil
}
