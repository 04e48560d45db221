package stats

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// sweepScript reads one SCAN page in one read-only call: the SCAN step, then
// per key its type, PTTL, length (the O(1) length command of its type) and
// memory. Memory is MEMORY USAGE … SAMPLES 0 (exact, and O(1)) for strings
// and for collections whose encoding is compact (listpack, ziplist, intset)
// or that hold at most memorySamples elements; a larger collection in a
// hashtable, skiplist, quicklist or stream encoding gets SAMPLES
// memorySamples (as on the pipeline path), a bounded sample Redis
// extrapolates from, and is flagged as an estimate — except a hash or set
// of more than bigTable elements, which gets no MEMORY USAGE at all (its
// row says estimate 2; estimateTables samples it). The script only reads;
// the keys it touches are the ones its own SCAN returned (no KEYS).
//
// ARGV: cursor, SCAN COUNT, memory mode ("s": MEMORY USAGE with SAMPLES;
// "p": plain MEMORY USAGE, for a server that does not know the option — the
// embedded demo; "-": no MEMORY USAGE, the server refused it),
// memorySamples, bigTable. A refused MEMORY USAGE fails the whole call; the Go side
// tells why from the error and calls again in the mode that fits.
//
// Reply: {cursor, {key, type, pttl, length, memory, estimated, key, …},
// commands called}: flat, and without pcall around the per-key calls,
// because every table and protected call costs Redis CPU per key (a
// nested reply with pcall cost a third more than the pipelines; this one
// costs about what they do).
var sweepScript = redis.NewScript(`
local call = redis.call
local r = call('SCAN', ARGV[1], 'COUNT', ARGV[2])
local calls = 1
local mode = ARGV[3]
local size = tonumber(ARGV[4])
local big = tonumber(ARGV[5])
local lencmd = {string='STRLEN', hash='HLEN', list='LLEN', set='SCARD', zset='ZCARD', stream='XLEN'}
local compact = {listpack=true, ziplist=true, intset=true}
local out = {}
local j = 0
for _, k in ipairs(r[2]) do
  local t = call('TYPE', k)
  if type(t) == 'table' then t = t.ok end
  local ttl = call('PTTL', k)
  local n, mem, est = -1, -1, 0
  local lc = lencmd[t]
  calls = calls + 2
  if lc then
    n = call(lc, k)
    calls = calls + 1
    if mode ~= '-' and (t == 'hash' or t == 'set') and n > big then
      est = 2
    elseif mode ~= '-' then
      local s = '0'
      if n > size and t ~= 'string' then
        local e = redis.pcall('OBJECT', 'ENCODING', k)
        calls = calls + 1
        if type(e) ~= 'string' or not compact[e] then
          s = ARGV[4]
          est = 1
        end
      end
      if mode == 's' then
        mem = call('MEMORY', 'USAGE', k, 'SAMPLES', s)
      else
        mem = call('MEMORY', 'USAGE', k)
        est = 0
      end
      calls = calls + 1
      if not mem then mem = -1 end
    end
  end
  out[j+1] = k; out[j+2] = t; out[j+3] = ttl; out[j+4] = n; out[j+5] = mem; out[j+6] = est
  j = j + 6
end
return {r[1], out, calls}
`)

// Script page sizing: one script call must stay well under 2 ms of server
// time. Measured on Redis 7.0: about 3.5 µs per small key, so a page of
// 200 keys takes about 0.7 ms, and a large key adds a few µs (its memory is
// sampled). Larger pages cost Redis less per key (each call has a fixed
// cost), so the count stays at the budget's (at most maxScriptCount) and
// shrinks only while the smoothed round trip — an upper bound of the
// server's time — stays over scriptSlow: a single slow round trip on a busy
// client machine says nothing about the server.
const (
	maxScriptCount = 200
	minScriptCount = 20
	scriptSlow     = 1500 * time.Microsecond
	scriptFast     = 600 * time.Microsecond
)

// errScriptReply is a script reply of an unexpected shape: the server is
// not what the script expects; the sweep reads with pipelines.
var errScriptReply = errors.New("unexpected reply from the sweep script")

// scriptStep reads one page with the sweep script. ok is false when the
// script cannot run on this server (refused by ACL, scripting disabled or
// unknown, a reply of another shape): the caller reads the page with
// pipelines instead and why says so. err is a connection error.
func (s *keySweep) scriptStep(ctx context.Context) (batch []KeyInfo, done, ok bool, err error) {
	for {
		mode := s.scripts.Mode(time.Now())
		if mode == redisview.ScriptRefused {
			return nil, false, false, nil
		}
		count := s.scriptCount
		mem := "s"
		switch {
		case s.mem.off:
			mem = "-"
		case s.mem.noSamples:
			mem = "p"
		}
		args := []any{string(s.cursor), count, mem, memorySamples, bigTable}
		t0 := time.Now()
		var cmd *redis.Cmd
		if mode == redisview.ScriptEvalRO {
			cmd = sweepScript.RunRO(ctx, s.client, nil, args...)
		} else {
			cmd = sweepScript.Run(ctx, s.client, nil, args...)
		}
		v, rerr := cmd.Result()
		rtt := time.Since(t0)
		if rerr == nil {
			batch, cursor, calls, perr := s.absorbScript(v)
			if perr == nil {
				if err := s.estimateTables(ctx, batch); err != nil {
					return nil, false, false, err
				}
				if s.conn != nil {
					s.conn.ScriptCalls(calls)
				}
				s.cursor = redisview.CursorOf(cursor)
				s.adapt(rtt)
				return batch, cursor == 0, true, nil
			}
			rerr = perr
		}
		if redisview.IsConnErr(rerr) && !errors.Is(rerr, errScriptReply) {
			return nil, false, false, rerr
		}
		msg := strings.ToLower(rerr.Error())
		switch {
		case mode == redisview.ScriptEvalRO && strings.Contains(msg, "unknown command"):
			s.scripts.Set(redisview.ScriptEval, "", time.Now())
			continue
		case mode == redisview.ScriptEvalRO && (strings.Contains(msg, "read-only script") || strings.Contains(msg, "not allowed in read-only")):
			// The server counts MEMORY USAGE among writes in read-only
			// scripts (miniredis, so the embedded demo): the same script,
			// which writes nothing, runs with EVALSHA.
			s.scripts.Set(redisview.ScriptEval, "", time.Now())
			continue
		case mem == "s" && strings.Contains(msg, "syntax error"):
			// MEMORY USAGE without its SAMPLES option (the demo).
			s.mem.noSamples = true
			continue
		case mem != "-" && strings.Contains(msg, "memory"):
			// MEMORY USAGE refused (ACL): the sweep goes on without memory.
			s.mem.off = true
			s.mem.Why = redisview.Refusal("MEMORY USAGE", rerr)
			continue
		}
		name := "EVAL_RO"
		if mode == redisview.ScriptEval {
			name = "EVAL"
		}
		s.scripts.Set(redisview.ScriptRefused, redisview.Refusal(name, rerr), time.Now())
		return nil, false, false, nil
	}
}

// adapt sizes the next page from the smoothed round trip.
func (s *keySweep) adapt(rtt time.Duration) {
	if s.rtt == 0 {
		s.rtt = rtt
	}
	s.rtt = (4*s.rtt + rtt) / 5
	limit := min(s.count, maxScriptCount)
	switch {
	case s.rtt > scriptSlow:
		s.scriptCount = max(minScriptCount, s.scriptCount*3/4)
	case s.rtt < scriptFast && s.scriptCount < limit:
		s.scriptCount = min(limit, s.scriptCount+s.scriptCount/4+1)
	}
}

// absorbScript turns the script's reply into the page's keys.
func (s *keySweep) absorbScript(v any) (batch []KeyInfo, cursor uint64, calls int64, err error) {
	parts, ok := v.([]any)
	if !ok || len(parts) != 3 {
		return nil, 0, 0, errScriptReply
	}
	cur, ok := parts[0].(string)
	if !ok {
		return nil, 0, 0, errScriptReply
	}
	cursor, perr := strconv.ParseUint(cur, 10, 64)
	if perr != nil {
		return nil, 0, 0, errScriptReply
	}
	flat, _ := parts[1].([]any)
	calls, _ = parts[2].(int64)
	if len(flat)%6 != 0 {
		return nil, 0, 0, errScriptReply
	}
	batch = make([]KeyInfo, 0, len(flat)/6)
	for i := 0; i < len(flat); i += 6 {
		f := flat[i : i+6]
		name, ok1 := f[0].(string)
		typ, ok2 := f[1].(string)
		ttl, ok3 := f[2].(int64)
		n, ok4 := f[3].(int64)
		mem, ok5 := f[4].(int64)
		est, ok6 := f[5].(int64)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
			return nil, 0, 0, errScriptReply
		}
		k := KeyInfo{Name: name, TTL: -1, Memory: mem, Elements: n, MemoryEstimated: est == 1 && mem >= 0, needsEstimate: est == 2}
		if typ != "none" {
			k.Type = typ
		}
		if ttl >= 0 {
			k.TTL = time.Duration(ttl) * time.Millisecond
		}
		batch = append(batch, k)
	}
	return batch, cursor, calls, nil
}
