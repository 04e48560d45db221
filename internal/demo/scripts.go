package demo

import "github.com/redis/go-redis/v9"

// The three eIsland scripts below are copied verbatim from seed 000 so that
// the demo data is written exactly the way the real services write it; a
// "cleaned up" version would produce subtly different values (float
// formatting, TTL refresh) and hide bugs in the console's readers.

// SliderTokenBucketSource is SliderCaptchaService's token bucket (DB 4).
// ARGV: now_ms, capacity, refill_per_ms, requested, ttl_seconds.
// Returns {allowed, floor(tokens), retry_after_ms}.
const SliderTokenBucketSource = `local key = KEYS[1]
local now_ms = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local refill_per_ms = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])
local ttl_seconds = tonumber(ARGV[5])

local state = redis.call('HMGET', key, 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])

if tokens == nil then
  tokens = capacity
end
if ts == nil then
  ts = now_ms
end

local elapsed = now_ms - ts
if elapsed < 0 then
  elapsed = 0
end

tokens = math.min(capacity, tokens + elapsed * refill_per_ms)

local allowed = 0
local retry_after_ms = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
else
  local deficit = requested - tokens
  retry_after_ms = math.ceil(deficit / refill_per_ms)
end

redis.call('HSET', key, 'tokens', tokens, 'ts', now_ms)
redis.call('EXPIRE', key, ttl_seconds)
return { allowed, math.floor(tokens), retry_after_ms }`

// AgentBalanceDeductSource is AgentBalanceRedisService's cap-at-zero deduct
// (DB 12). ARGV: amount with 8 decimals. Returns "-1" (missing, caller
// initialises with SETNX and retries), "-3" (empty) or "newBal|deducted".
const AgentBalanceDeductSource = `local bal = redis.call('GET', KEYS[1])
if bal == false then
    return '-1'
end
local current = tonumber(bal)
if current <= 0 then
    return '-3'
end
local amount  = tonumber(ARGV[1])
local deducted = math.min(current, amount)
local newBal = current - deducted
local fmtBal = string.format('%.8f', newBal)
local fmtDed = string.format('%.8f', deducted)
redis.call('SET', KEYS[1], fmtBal)
return fmtBal .. '|' .. fmtDed`

// RateLimitIncrExpireSource is MiniGameScoreService's fixed window (DB 14):
// the TTL is set only by the first INCR so later hits never extend the window.
// ARGV: windowSeconds. Returns the count.
const RateLimitIncrExpireSource = `local count = redis.call('INCR', KEYS[1]); if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]); end; return count;`

// GatewayTokenBucketSource is the gateway's q:rps:{keyId} bucket. The seed
// fixes only its shape (HASH tokens, last_refill; TTL twice the window) and
// insists on one script, never separate round trips, because read-refill-take
// as three calls races under concurrent load.
// ARGV: now_ms, capacity, refill_per_sec, requested.
// Returns {allowed, floor(tokens), retry_after_ms}.
const GatewayTokenBucketSource = `local key = KEYS[1]
local now_ms = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local refill_per_sec = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])

local state = redis.call('HMGET', key, 'tokens', 'last_refill')
local tokens = tonumber(state[1])
local last_refill = tonumber(state[2])
if tokens == nil then
  tokens = capacity
end
if last_refill == nil then
  last_refill = now_ms
end

local elapsed = now_ms - last_refill
if elapsed < 0 then
  elapsed = 0
end
tokens = math.min(capacity, tokens + elapsed * refill_per_sec / 1000)

local allowed = 0
local retry_after_ms = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
else
  retry_after_ms = math.ceil((requested - tokens) * 1000 / refill_per_sec)
end

-- the window is the time an empty bucket takes to fill
local window_seconds = math.ceil(capacity / refill_per_sec)
redis.call('HSET', key, 'tokens', tokens, 'last_refill', now_ms)
redis.call('EXPIRE', key, math.max(1, 2 * window_seconds))
return { allowed, math.floor(tokens), retry_after_ms }`

// compareAndDeleteSource releases a lock only while it still holds the value
// its holder wrote, so a late release never frees a newer holder's lock.
const compareAndDeleteSource = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`

// bucket4jCASSource mirrors Bucket4j's compare-and-swap write: replace the
// state only if nobody wrote since we read it. Bucket4j 8.19's Vert.x builder
// has no expiration strategy, so the write is a plain SET that drops any TTL;
// Vertique restores it with PEXPIRE afterwards.
const bucket4jCASSource = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]); return 1 end return 0`

var (
	SliderTokenBucket     = redis.NewScript(SliderTokenBucketSource)
	AgentBalanceDeduct    = redis.NewScript(AgentBalanceDeductSource)
	RateLimitIncrExpire   = redis.NewScript(RateLimitIncrExpireSource)
	GatewayTokenBucket    = redis.NewScript(GatewayTokenBucketSource)
	compareAndDelete      = redis.NewScript(compareAndDeleteSource)
	bucket4jCompareAndSet = redis.NewScript(bucket4jCASSource)
)
