package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"time"
)

// The gateway's q:rps bucket settings. The seed leaves them to deployment
// (DESIGN.md makes them pack parameters); the demo deployment allows a burst
// of 60 requests per key and a sustained one request per second, which is a
// plausible budget for slow LLM calls.
const (
	GatewayRPSCapacity     = 60
	GatewayRPSRefillPerSec = 1
)

const (
	gatewayReservationTTL = 5 * time.Minute
	gatewayConcurrencyTTL = 5 * time.Minute
	gatewayTokensTTL      = 40 * 24 * time.Hour
	gatewayHintTTL        = 30 * time.Second
)

var (
	gatewayKeyIDs = func() []string {
		rng := rand.New(rand.NewPCG(0x6A7E, 1))
		ids := make([]string, 24)
		for i := range ids {
			ids[i] = "gk_" + hexString(rng, 12)
		}
		return ids
	}()
	gatewayRoutes = []struct {
		provider, model string
	}{
		{"openai", "gpt-4o"}, {"openai", "gpt-4o-mini"}, {"anthropic", "claude-3-5-sonnet"},
		{"deepseek", "deepseek-chat"}, {"google", "gemini-1.5-pro"},
	}
	cacheNamespaces = map[string]time.Duration{"chat-default": 10 * time.Minute, "faq-bot": 24 * time.Hour,
		"summarize": time.Hour}
)

// gatewayMonth is the budget period of q:tokens; the gateway runs on UTC.
func gatewayMonth(t time.Time) string { return t.UTC().Format("200601") }

func gatewayRPSArgs(nowMs int64) []any {
	return []any{nowMs, GatewayRPSCapacity, GatewayRPSRefillPerSec, 1}
}

// OrphanRequestID is the seeded in-flight request whose reservation is gone.
const OrphanRequestID = "req_orphaned0000000000000000000000"

// OrphanReservationID is the seeded reservation left behind by its
// reconciliation: in no concurrency set.
const OrphanReservationID = "req_leftbehind00000000000000000000"

func requestID(rng *rand.Rand) string { return "req_" + hexString(rng, 20) }

// cacheEntry is one exact-match cached completion for namespace ns.
func cacheEntry(rng *rand.Rand, ns string, now time.Time) (key, value string) {
	r := pick(rng, gatewayRoutes)
	// a few dozen distinct prompts per namespace: repeats are what an
	// exact-match cache exists for
	prompt := strconv.Itoa(rng.IntN(60))
	sum := sha256.Sum256([]byte(ns + "|" + r.model + "|" + prompt))
	return "cache:exact:" + ns + ":" + hex.EncodeToString(sum[:]), js(map[string]any{
		"id": "chatcmpl-" + hexString(rng, 24), "object": "chat.completion", "created": now.Unix(), "model": r.model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": pick(rng, cannedAnswers)}}},
		"usage": map[string]any{"prompt_tokens": 40 + rng.IntN(900), "completion_tokens": 20 + rng.IntN(400)},
	})
}

var cannedAnswers = []string{
	"You can reset your password from Settings → Security → Reset password.",
	"Refunds are processed within 3–5 business days to the original payment method.",
	"Summary: the incident was caused by an expired TLS certificate on the edge proxy.",
	"退款将在 3–5 个工作日内原路返回。",
	"Here is the JSON you asked for: {\"status\": \"ok\", \"items\": []}",
	"<b>Note:</b> HTML in a cached answer must be shown as text, not rendered.",
}

func seedGatewayKeys(s *seeder) {
	nowMs := s.now.UnixMilli()
	for i, id := range gatewayKeyIDs {
		n := 1 + s.rng.IntN(20)
		if i == 0 {
			n = 75 // one noisy client has drained its bucket
		}
		for j := range n {
			at := nowMs - int64(n-j)*int64(200+s.rng.IntN(2000))
			GatewayTokenBucket.Eval(s.ctx, s.p, []string{"q:rps:" + id}, gatewayRPSArgs(at)...)
		}

		// A budget counter's TTL is refreshed by every write, so last
		// month's key is still there until 40 days after its last write.
		monthStart := time.Date(s.now.UTC().Year(), s.now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
		lastWrite := time.Duration(s.rng.Int64N(int64(24 * time.Hour)))
		s.set("q:tokens:"+id+":"+gatewayMonth(s.now), 50_000+s.rng.IntN(4_000_000), remaining(gatewayTokensTTL, lastWrite))
		if i%3 != 0 {
			prev := monthStart.Add(-time.Hour)
			s.set("q:tokens:"+id+":"+gatewayMonth(prev), 200_000+s.rng.IntN(9_000_000),
				remaining(gatewayTokensTTL, s.now.Sub(prev)))
		}
	}
	for _, id := range gatewayKeyIDs[:8] {
		conc := "q:conc:" + id
		for range 1 + s.rng.IntN(4) {
			req := requestID(s.rng)
			ttl := s.left(gatewayReservationTTL)
			s.set("q:reserved:"+req, 512*(1+s.rng.IntN(16)), ttl)
			s.p.SAdd(s.ctx, conc, req)
		}
		s.p.PExpire(s.ctx, conc, s.left(gatewayConcurrencyTTL))
	}
	// A request that crashed after its reservation expired: still a member
	// of its key's concurrency set, with no q:reserved left. The console
	// flags such members.
	s.p.SAdd(s.ctx, "q:conc:"+gatewayKeyIDs[1], OrphanRequestID)
	s.p.PExpire(s.ctx, "q:conc:"+gatewayKeyIDs[1], s.left(gatewayConcurrencyTTL))

	// A reservation its reconciliation forgot: the request left its
	// concurrency set 2m30s ago but q:reserved is still there, in no set,
	// older than a request lives (the console flags it orphaned; an admin
	// may release it). The simulator leaves more behind from time to time.
	s.set("q:reserved:"+OrphanReservationID, 2048, gatewayReservationTTL-150*time.Second)

	// The deliberate schema violation: a reservation written on a code path
	// that forgot its TTL. It never expires, and the console must flag it.
	s.set("q:reserved:"+requestID(s.rng), 8192, 0)

	s.set("cb:hint:openai:gpt-4o", "open", s.left(gatewayHintTTL))
	s.set("cb:hint:google:gemini-1.5-pro", "open", s.left(gatewayHintTTL))

	for _, ns := range []string{"chat-default", "faq-bot", "summarize"} {
		for range 20 + s.rng.IntN(30) {
			k, v := cacheEntry(s.rng, ns, s.now)
			s.set(k, v, s.left(cacheNamespaces[ns]))
		}
	}
	s.set("cfg:routing:version", 42, 0)
}
