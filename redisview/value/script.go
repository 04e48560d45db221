package value

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// windowSource reads one window of a collection inside the server and cuts
// every element there: each field, member, value or stream field comes
// back as its first ARGV[2] bytes (string.sub) and its full length, so a
// 10 MB member costs a few hundred bytes on the wire. It is read-only and
// calls only O(log N + page) commands.
//
// ARGV: mode, cap, count, then by mode
//
//	hscan|sscan  cursor, match ("" none), max scan calls, elements of
//	             the first reply already shown (skip)
//	lrange|zrank start, stop
//	zscore       min, max, offset in the window
//	xrange|xrev  start ID (xrev: end ID), max field pairs per entry
//
// Reply: {head, parts, calls}. head is {length, …} by mode (see parse);
// parts is flat: a cut part is two items (bytes, full length), a sorted-set
// element is its member's two and its score, a stream entry is its ID,
// the number of parts kept, its field count, then its parts.
const windowSource = `
local key, mode = KEYS[1], ARGV[1]
local cap, count = tonumber(ARGV[2]), tonumber(ARGV[3])
local calls = 0
local function call(...)
  calls = calls + 1
  return redis.call(...)
end
local out = {}
local function put(s)
  out[#out + 1] = string.sub(s, 1, cap)
  out[#out + 1] = #s
end
local head = {}
if mode == 'hscan' or mode == 'sscan' then
  local cmd, lencmd, per = 'HSCAN', 'HLEN', 2
  if mode == 'sscan' then cmd, lencmd, per = 'SSCAN', 'SCARD', 1 end
  head[1] = call(lencmd, key)
  local cursor, match, scans, skip, got = ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]), 0
  local resume = ''
  for i = 1, scans do
    local r
    if match == '' then
      r = call(cmd, key, cursor, 'COUNT', count)
    else
      r = call(cmd, key, cursor, 'MATCH', match, 'COUNT', count)
    end
    -- A reply may hold far more than COUNT (a listpack key comes whole):
    -- keep count elements and resume after the last one kept, inside
    -- this reply (cursor:skip), not at the server's next cursor.
    local items = r[2]
    local n = math.floor(#items / per)
    for j = skip + 1, n do
      if got >= count then
        resume = cursor .. ':' .. string.format('%d', j - 1)
        break
      end
      for k = 1, per do put(items[(j - 1) * per + k]) end
      got = got + 1
    end
    skip = 0
    if resume ~= '' then break end
    cursor = r[1]
    if cursor == '0' or match == '' or got >= count / 2 then break end
  end
  if resume ~= '' then cursor = resume end
  head[2] = cursor
elseif mode == 'lrange' then
  head[1] = call('LLEN', key)
  for _, s in ipairs(call('LRANGE', key, ARGV[4], ARGV[5])) do put(s) end
elseif mode == 'zrank' then
  head[1] = call('ZCARD', key)
  local r = call('ZRANGE', key, ARGV[4], ARGV[5], 'WITHSCORES')
  for i = 1, #r, 2 do
    put(r[i])
    out[#out + 1] = r[i + 1]
  end
elseif mode == 'zscore' then
  head[1] = call('ZCARD', key)
  local min, max, off = ARGV[4], ARGV[5], tonumber(ARGV[6])
  local n = call('ZCOUNT', key, min, max)
  head[2], head[3] = n, -1
  if n > 0 then
    -- The window is a run of ranks: find its first, then read by rank
    -- (a BYSCORE LIMIT offset would walk every element before the offset).
    local first = call('ZRANGEBYSCORE', key, min, max, 'LIMIT', 0, 1)
    local r0 = call('ZRANK', key, first[1])
    head[3] = r0
    if off < n then
      local r = call('ZRANGE', key, r0 + off, r0 + math.min(off + count, n) - 1, 'WITHSCORES')
      for i = 1, #r, 2 do
        put(r[i])
        out[#out + 1] = r[i + 1]
      end
    end
  end
elseif mode == 'xrange' or mode == 'xrev' then
  head[1] = call('XLEN', key)
  local at, pairs_ = ARGV[4], tonumber(ARGV[5])
  local r
  if mode == 'xrange' then
    r = call('XRANGE', key, at, '+', 'COUNT', count + 1)
  else
    r = call('XREVRANGE', key, at, '-', 'COUNT', count + 1)
  end
  local n = math.min(#r, count)
  head[2], head[3] = 0, ''
  if #r > count then head[2] = 1 end
  if n > 0 and at ~= '-' and at ~= '+' then
    -- Where the previous page starts: count entries back from this one.
    local p
    if mode == 'xrange' then
      p = call('XREVRANGE', key, '(' .. r[1][1], '-', 'COUNT', count)
    else
      p = call('XRANGE', key, '(' .. r[1][1], '+', 'COUNT', count)
    end
    if #p > 0 then head[3] = p[#p][1] end
  end
  for i = 1, n do
    local id, f = r[i][1], r[i][2]
    local keep = math.min(#f, 2 * pairs_)
    out[#out + 1] = id
    out[#out + 1] = keep
    out[#out + 1] = #f
    for j = 1, keep do put(f[j]) end
  end
end
return {head, out, calls}
`

var windowScript = redis.NewScript(windowSource)

// reply is what the script (or its pipelined stand-in) answered.
type reply struct {
	head  []any
	parts []any
	enc   string // OBJECT ENCODING, "" when the server would not say
	path  string // "lua" or "commands"
}

// readWindow runs w: by the script where the server allows scripts,
// otherwise by plain commands (elements cut after they arrive, and only
// for a collection bounded() accepts). OBJECT ENCODING rides along in the
// same round trip.
func readWindow(ctx context.Context, conn *redisview.Conn, c redis.UniversalClient, key, typ string, w window) (reply, error) {
	st := conn.Scripts()
	for {
		mode := st.Mode(time.Now())
		if mode == redisview.ScriptRefused {
			break
		}
		r, err := runScript(ctx, conn, c, key, w, mode)
		if err == nil {
			return r, nil
		}
		if redisview.IsConnErr(err) || errors.Is(err, errBadReply) || errors.Is(err, ErrCursor) {
			return reply{}, err
		}
		msg := strings.ToLower(err.Error())
		if strings.Contains(msg, "wrongtype") {
			return reply{}, err
		}
		if mode == redisview.ScriptEvalRO && strings.Contains(msg, "unknown command") {
			st.Set(redisview.ScriptEval, "", time.Now())
			continue
		}
		name := "EVAL_RO"
		if mode == redisview.ScriptEval {
			name = "EVAL"
		}
		st.Set(redisview.ScriptRefused, redisview.Refusal(name, err)+"; values and leaderboards are read with plain commands", time.Now())
		conn.Log().Warn("value script refused, using plain commands", "err", conn.SafeErr(err))
		break
	}
	enc, err := bounded(ctx, c, key, typ)
	if err != nil {
		return reply{}, err
	}
	r, err := runCommands(ctx, c, key, w)
	r.enc, r.path = enc, "commands"
	return r, err
}

var errBadReply = errors.New("unexpected script reply")

func badReply(what string) error { return fmt.Errorf("%w: %s", errBadReply, what) }

func runScript(ctx context.Context, conn *redisview.Conn, c redis.UniversalClient, key string, w window, mode redisview.ScriptMode) (reply, error) {
	args := append([]any{w.mode, MaxPart, PageSize}, w.args...)
	keys := []string{key}
	var enc *redis.StringCmd
	var run *redis.Cmd
	exec := func(load bool) error {
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			enc = p.ObjectEncoding(ctx, key)
			switch {
			case load && mode == redisview.ScriptEvalRO:
				run = p.EvalRO(ctx, windowSource, keys, args...)
			case load:
				run = p.Eval(ctx, windowSource, keys, args...)
			case mode == redisview.ScriptEvalRO:
				run = p.EvalShaRO(ctx, windowScript.Hash(), keys, args...)
			default:
				run = p.EvalSha(ctx, windowScript.Hash(), keys, args...)
			}
			return nil
		})
		if redisview.IsConnErr(err) {
			return err
		}
		return run.Err()
	}
	err := exec(false)
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		err = exec(true)
	}
	if err != nil {
		return reply{}, err
	}
	v, ok := run.Val().([]any)
	if !ok || len(v) != 3 {
		return reply{}, badReply("not {head, parts, calls}")
	}
	head, _ := v[0].([]any)
	parts, _ := v[1].([]any)
	calls, _ := v[2].(int64)
	conn.ScriptCalls(calls)
	r := reply{head: head, parts: parts, path: "lua"}
	r.enc, _ = enc.Result()
	return r, nil
}

func entryID(e any) string {
	if ev, ok := e.([]any); ok && len(ev) > 0 {
		return str(ev[0])
	}
	return ""
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}

// cursorParts reads parts from a flat reply.
type cursorParts struct {
	items []any
	i     int
	err   error
}

func (c *cursorParts) more() bool { return c.err == nil && c.i < len(c.items) }

func (c *cursorParts) raw() any {
	if c.i >= len(c.items) {
		c.err = badReply("reply ends early")
		return nil
	}
	v := c.items[c.i]
	c.i++
	return v
}

func (c *cursorParts) int() int64 {
	n, ok := num(c.raw())
	if !ok && c.err == nil {
		c.err = badReply("a length is not an integer")
	}
	return n
}

func (c *cursorParts) part() Part {
	b := str(c.raw())
	n := c.int()
	return Part{Bytes: b, Len: int(n)}
}

func (c *cursorParts) score() float64 {
	s := str(c.raw())
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && c.err == nil {
		c.err = badReply("score " + strconv.Quote(s))
	}
	return f
}
