package schema

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"
)

func b64u(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
func b64s(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

const (
	fp   = "1a2b3c4d"
	hmac = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	xss  = `<script>alert("x")</script>`
)

type keyCase struct {
	pack string
	db   int
	key  string
	fam  string            // expected family id
	role Role              // expected role
	vars map[string]string // expected decoded values; nil: not checked
}

// keyCases has at least one concrete key for every family of the three
// packs, i.e. for every key pattern of the seeds, many with placeholder
// values that contain the separator, unicode, spaces, HTML or base64.
var keyCases = []keyCase{
	// eisland DB 0
	{"eisland", 0, "server:service-status::translate", "service-status", RoleCache, map[string]string{"apiName": "translate"}},
	{"eisland", 0, "server:service-status::ai:chat", "service-status", RoleCache, map[string]string{"apiName": "ai:chat"}},
	{"eisland", 0, "server:service-status-list::all", "service-status-list", RoleCache, nil},
	{"eisland", 0, "server:app-version::eIsland Desktop", "app-version", RoleCache, map[string]string{"appName": "eIsland Desktop"}},
	{"eisland", 0, "server:app-version-list::all", "app-version-list", RoleCache, nil},
	{"eisland", 0, "announcement:current:v2", "announcement-current", RoleCache, nil},
	{"eisland", 0, "toolbox:software:list", "toolbox-software-list", RoleCache, nil},
	{"eisland", 0, "version:app:bloom", "version-app-bloom", RoleBloom, nil},
	{"eisland", 0, "version:app:set", "version-app-set", RoleBloomMembers, nil},
	// DB 1
	{"eisland", 1, "server:avatar-data::李雷", "avatar-data", RoleCache, map[string]string{"username": "李雷"}},
	{"eisland", 1, "server:avatar-data::" + xss, "avatar-data", RoleCache, map[string]string{"username": xss}},
	// DB 2
	{"eisland", 2, "verify:code:RESET_PASSWORD:a.b+c@example.com", "verify-code", RoleVerificationCode, map[string]string{"SCENE": "RESET_PASSWORD", "email": "a.b+c@example.com"}},
	{"eisland", 2, "verify:code:LOGIN:\"odd:local\"@example.com", "verify-code", RoleVerificationCode, map[string]string{"SCENE": "LOGIN", "email": "\"odd:local\"@example.com"}},
	{"eisland", 2, "verify:attempts:REGISTER:李雷@例子.中国", "verify-attempts", RoleCounter, map[string]string{"SCENE": "REGISTER", "email": "李雷@例子.中国"}},
	{"eisland", 2, "verify:cooldown:CHANGE_EMAIL:x@y.z", "verify-cooldown", RoleCooldown, nil},
	{"eisland", 2, "verify:rate:ip:2001:db8::1", "verify-rate-ip", RoleCounterWindow, map[string]string{"ip": "2001:db8::1"}},
	{"eisland", 2, "verify:rate:email:hour:x@y.z", "verify-rate-email-hour", RoleCounterWindow, nil},
	{"eisland", 2, "verify:rate:email:day:x@y.z", "verify-rate-email-day", RoleCounterWindow, nil},
	{"eisland", 2, "identity:rate:ops:admin", "identity-rate", RoleCounterWindow, map[string]string{"username": "ops:admin"}},
	{"eisland", 2, "identity:verified:john smith", "identity-verified", RoleCache, map[string]string{"username": "john smith"}},
	// DB 3
	{"eisland", 3, "server:wallpaper-list::sunset:static:latest:1:20:cn-sh:false", "wallpaper-list", RoleCache,
		map[string]string{"keyword": "sunset", "type": "static", "sortBy": "latest", "page": "1", "pageSize": "20", "requestedNode": "cn-sh", "proUser": "false"}},
	{"eisland", 3, "server:wallpaper-list::a:b <i>c</i> 夕阳:dynamic:hot:12:50:us-west:true", "wallpaper-list", RoleCache,
		map[string]string{"keyword": "a:b <i>c</i> 夕阳", "type": "dynamic", "sortBy": "hot", "page": "12", "pageSize": "50", "requestedNode": "us-west", "proUser": "true"}},
	{"eisland", 3, "server:wallpaper-list::total:sunset:static", "wallpaper-list-total", RoleCache, map[string]string{"keyword": "sunset", "type": "static"}},
	{"eisland", 3, "server:wallpaper-list::total:night:city:all", "wallpaper-list-total", RoleCache, map[string]string{"keyword": "night:city", "type": "all"}},
	{"eisland", 3, "server:wallpaper-admin-list::PENDING:cats:1:20", "wallpaper-admin-list", RoleCache, map[string]string{"query": "PENDING:cats:1:20"}},
	{"eisland", 3, "server:wallpaper-my-list::alice:sea:static:latest:2:20:cn-sh:true", "wallpaper-my-list", RoleCache,
		map[string]string{"ownerUsername": "alice", "keyword": "sea", "type": "static", "page": "2"}},
	{"eisland", 3, "server:wallpaper-my-list::total:alice:sea:static", "wallpaper-my-list-total", RoleCache, map[string]string{"ownerUsername": "alice", "keyword": "sea"}},
	{"eisland", 3, "server:wallpaper-detail::10086:cn-sh:false", "wallpaper-detail", RoleCache, map[string]string{"id": "10086", "requestedNode": "cn-sh", "proUser": "false"}},
	{"eisland", 3, "wallpaper:detail:bloom", "wallpaper-detail-bloom", RoleBloom, nil},
	{"eisland", 3, "wallpaper:detail:set", "wallpaper-detail-set", RoleBloomMembers, nil},
	// DB 4
	{"eisland", 4, "verify:slider:challenge:9f1c2d3e-aaaa-bbbb-cccc-0123456789ab", "slider-challenge", RoleChallenge, nil},
	{"eisland", 4, "verify:slider:challenge-owner:c1", "slider-challenge-owner", RoleChallenge, map[string]string{"challengeId": "c1"}},
	{"eisland", 4, "verify:slider:challenge-ip-owner:c1", "slider-challenge-ip-owner", RoleChallenge, nil},
	{"eisland", 4, "verify:slider:account:challenges:" + b64u("ops:admin"), "slider-account-challenges", RoleIndex, map[string]string{"account": "ops:admin"}},
	{"eisland", 4, "verify:slider:ip:challenges:" + b64s("10.0.0.1"), "slider-ip-challenges", RoleIndex, map[string]string{"ip": "10.0.0.1"}},
	{"eisland", 4, "verify:slider:sign:4f2a9c", "slider-sign", RoleTicket, nil},
	{"eisland", 4, "verify:slider:rate:create:account:" + b64u("李雷"), "slider-rate-create-account", RoleTokenBucket, map[string]string{"account": "李雷"}},
	{"eisland", 4, "verify:slider:rate:create:account:" + b64s("john smith <b>"), "slider-rate-create-account", RoleTokenBucket, map[string]string{"account": "john smith <b>"}},
	{"eisland", 4, "verify:slider:rate:create:ip:" + b64u("203.0.113.7"), "slider-rate-create-ip", RoleTokenBucket, map[string]string{"ip": "203.0.113.7"}},
	{"eisland", 4, "verify:slider:rate:verify:ip:" + b64u("2001:db8::1"), "slider-rate-verify-ip", RoleTokenBucket, map[string]string{"ip": "2001:db8::1"}},
	{"eisland", 4, "verify:slider:fail:account:" + b64u("bob"), "slider-fail-account", RoleCounterWindow, map[string]string{"account": "bob"}},
	{"eisland", 4, "verify:slider:fail:ip:" + b64u("10.1.2.3"), "slider-fail-ip", RoleCounterWindow, map[string]string{"ip": "10.1.2.3"}},
	// DB 5
	{"eisland", 5, "totp:security:secret:plain:alice", "totp-secret-plain", RoleSecret, nil},
	{"eisland", 5, "totp:security:secret:enc:ops:admin", "totp-secret-enc", RoleSecret, map[string]string{"username": "ops:admin"}},
	{"eisland", 5, "totp:security:fail:alice", "totp-fail", RoleCounterWindow, nil},
	{"eisland", 5, "totp:security:replay:ops:admin:59233841:004211", "totp-replay", RoleNonce, map[string]string{"username": "ops:admin", "counter": "59233841", "code": "004211"}},
	{"eisland", 5, "totp:security:rate:user:alice", "totp-rate-user", RoleCounterWindow, nil},
	{"eisland", 5, "totp:security:rate:ip:::1", "totp-rate-ip", RoleCounterWindow, map[string]string{"clientIp": "::1"}},
	// DB 6
	{"eisland", 6, "auth:limit:login:failures:bob_chen", "login-failures", RoleSlidingWindow, map[string]string{"key": "bob_chen"}},
	{"eisland", 6, "auth:limit:login:lock:ops:admin", "login-lock", RoleLock, map[string]string{"key": "ops:admin"}},
	{"eisland", 6, "auth:limit:register:attempts:198.51.100.4", "register-attempts", RoleSlidingWindow, nil},
	{"eisland", 6, "auth:replay:ops:admin:POST:/api/payment/notify/wechat:9c0ffee", "auth-replay", RoleNonce,
		map[string]string{"principal": "ops:admin", "METHOD": "POST", "URI": "/api/payment/notify/wechat", "nonce": "9c0ffee"}},
	{"eisland", 6, "auth:replay:anonymous:PUT:/api/user/profile?x=a:b:n1", "auth-replay", RoleNonce,
		map[string]string{"principal": "anonymous", "METHOD": "PUT", "URI": "/api/user/profile?x=a:b", "nonce": "n1"}},
	// DB 7, 8, 9
	{"eisland", 7, "upload:limit:user-avatar:ip:10.0.0.9", "upload-avatar-ip", RoleCounterWindow, nil},
	{"eisland", 7, "upload:limit:user-avatar:account:李雷", "upload-avatar-account", RoleCounterWindow, nil},
	{"eisland", 7, "wallpaper:upload:alice", "wallpaper-upload", RoleCounterWindow, nil},
	{"eisland", 8, "issue-feedback:submit:alice:2001:db8::7", "issue-feedback-submit", RoleCounterWindow, map[string]string{"username": "alice", "ip": "2001:db8::7"}},
	{"eisland", 9, "user:ban:bloom", "user-ban-bloom", RoleBloom, nil},
	{"eisland", 9, "user:ban:set", "user-ban-set", RoleBloomMembers, nil},
	// DB 10
	{"eisland", 10, "payment:pricing:pro-month:amount-fen", "pricing-pro-month-amount", RoleConfig, nil},
	{"eisland", 10, "payment:pricing:free:desc", "pricing-free-desc", RoleConfig, nil},
	{"eisland", 10, "payment:pricing:free:features", "pricing-free-features", RoleConfig, nil},
	{"eisland", 10, "payment:pricing:pro:desc", "pricing-pro-desc", RoleConfig, nil},
	{"eisland", 10, "payment:pricing:pro:features", "pricing-pro-features", RoleConfig, nil},
	{"eisland", 10, "payment:order:channel:EI202607061030000042", "order-channel", RoleRecord, nil},
	{"eisland", 10, "payment:order:receipt-email:EI202607061030000042", "order-receipt-email", RoleRecord, nil},
	{"eisland", 10, "payment:user:active-order:李雷", "user-active-order", RoleIndex, nil},
	{"eisland", 10, "payment:notify:done:wechat:EI2026:07:420000123:4200001234", "notify-done", RoleIdempotency,
		map[string]string{"channel": "wechat", "outTradeNo": "EI2026:07:420000123", "transactionId": "4200001234"}},
	{"eisland", 10, "payment:order:op-lock:EI202607061030000042", "order-op-lock", RoleLock, nil},
	{"eisland", 10, "payment:lock:create:pro-month:ops:admin", "lock-create-pro-month", RoleLock, map[string]string{"username": "ops:admin"}},
	{"eisland", 10, "payment:lock:create:agent-recharge:李雷", "lock-create-agent-recharge", RoleLock, nil},
	{"eisland", 10, "payment:lock:create:test:alipay:ops:admin", "lock-create-test", RoleLock, map[string]string{"channel": "alipay", "username": "ops:admin"}},
	// DB 11
	{"eisland", 11, "qweather:daily3d:116.41,39.92:zh:m", "qweather-daily3d", RoleCache, map[string]string{"location": "116.41,39.92", "lang": "zh", "unit": "m"}},
	{"eisland", 11, "qweather:alerts:101010100:en", "qweather-alerts", RoleCache, nil},
	{"eisland", 11, "qweather:geo:city:New York: Manhattan:en", "qweather-geo-city", RoleCache, map[string]string{"query": "New York: Manhattan", "lang": "en"}},
	{"eisland", 11, "qweather:quota:provider:qweather:202607", "qweather-quota", RoleQuota, map[string]string{"YYYYMM": "202607"}},
	{"eisland", 11, "tmt:quota:monthly:202607", "tmt-quota", RoleQuota, nil},
	// DB 12, 13
	{"eisland", 12, "agent:balance:ops:admin", "agent-balance", RoleBalance, map[string]string{"username": "ops:admin"}},
	{"eisland", 13, "agent:usage:gpt-4o", "agent-usage", RoleStats, nil},
	{"eisland", 13, "agent:usage:__models__", "agent-usage-models", RoleIndex, nil},
	{"eisland", 13, "agent:pricing:deepseek:chat", "agent-pricing", RoleCache, map[string]string{"modelName": "deepseek:chat"}},
	{"eisland", 13, "toolbox:translate:pricing:tencent-tmt", "translate-pricing", RoleCache, nil},
	// DB 14
	{"eisland", 14, "mg:score:high:2048:ops:admin", "mg-score-high", RoleCache, map[string]string{"gameId": "2048", "userId": "ops:admin"}},
	{"eisland", 14, "mg:score:leaderboard:2048", "mg-leaderboard", RoleLeaderboard, map[string]string{"gameId": "2048"}},
	{"eisland", 14, "mg:score:user-meta:2048:李雷", "mg-user-meta", RoleLeaderboardMeta, nil},
	{"eisland", 14, "mg:score:idempotency:sub-1", "mg-idempotency", RoleIdempotency, nil},
	{"eisland", 14, "mg:score:consume:idempotency:sub-1", "mg-consume-idempotency", RoleIdempotency, nil},
	{"eisland", 14, "mg:score:lock:2048:alice", "mg-score-lock", RoleLock, nil},
	{"eisland", 14, "mg:score:submit:rate:2048:alice", "mg-submit-rate", RoleCounterWindow, nil},
	{"eisland", 14, "mg:score:leaderboard:refresh:rate:2048:alice", "mg-leaderboard-refresh-rate", RoleCounterWindow, map[string]string{"gameId": "2048", "userId": "alice"}},
	{"eisland", 14, "mg:score:session:2048:ops:admin:9f3a", "mg-session", RoleSession, map[string]string{"gameId": "2048", "userId": "ops:admin", "sessionId": "9f3a"}},
	// gateway (any database)
	{"gateway", 0, "q:rps:gk_0123abcd", "rps-bucket", RoleTokenBucket, map[string]string{"keyId": "gk_0123abcd"}},
	{"gateway", 0, "q:tokens:gk_0123abcd:202607", "monthly-tokens", RoleQuota, map[string]string{"keyId": "gk_0123abcd", "yyyyMM": "202607"}},
	{"gateway", 3, "q:tokens:team:a:202607", "monthly-tokens", RoleQuota, map[string]string{"keyId": "team:a"}},
	{"gateway", 0, "q:reserved:req_1f2e", "reservation", RoleReservation, nil},
	{"gateway", 0, "q:conc:gk_0123abcd", "concurrency", RoleConcurrencySet, nil},
	{"gateway", 0, "cb:hint:openai:gpt-4o", "breaker-hint", RoleBreakerHint, map[string]string{"provider": "openai", "model": "gpt-4o"}},
	{"gateway", 0, "cb:hint:ollama:llama3:70b", "breaker-hint", RoleBreakerHint, map[string]string{"provider": "ollama", "model": "llama3:70b"}},
	{"gateway", 0, "cache:exact:chat-default:" + hmac, "exact-cache", RoleResponseCache, map[string]string{"ns": "chat-default", "hash": hmac}},
	{"gateway", 0, "cache:exact:team:faq:" + hmac, "exact-cache", RoleResponseCache, map[string]string{"ns": "team:faq"}},
	{"gateway", 0, "cfg:routing:version", "routing-version", RoleConfig, nil},
	// vertique (any database)
	{"vertique", 0, "vertique:rate-limit:v1:" + fp + ":" + hmac, "bucket", RoleBucket4j, map[string]string{"fingerprint": fp, "hmac": hmac}},
}

func TestClassifyKeyCases(t *testing.T) {
	for _, tc := range keyCases {
		p := BuiltinPack(tc.pack)
		m, ok := p.Classifier().Match(tc.db, tc.key)
		if !ok {
			t.Errorf("%s db %d %q: no match, want %s", tc.pack, tc.db, tc.key, tc.fam)
			continue
		}
		f := m.Family
		if f.ID != tc.fam || f.Role != tc.role || !f.InDB(tc.db) {
			t.Errorf("%s db %d %q: got %s (%s, db %v), want %s (%s)", tc.pack, tc.db, tc.key, f.ID, f.Role, f.DBs, tc.fam, tc.role)
		}
		if cf, _ := p.Classifier().Classify(tc.db, tc.key); cf != f {
			t.Errorf("%q: Classify and Match disagree", tc.key)
		}
		got := m.Map()
		for k, want := range tc.vars {
			if got[k] != want {
				t.Errorf("%q: {%s} = %q, want %q (all: %v)", tc.key, k, got[k], want, got)
			}
		}
		// The key is one of those its values derive (a base64
		// placeholder: in any encoding its class allows).
		if back, err := f.Keys(got); err != nil || !slices.Contains(back, tc.key) {
			t.Errorf("%q: Keys(vars) = %q, %v", tc.key, back, err)
		}
	}
}

func TestEveryFamilyHasAKeyCase(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range keyCases {
		covered[tc.pack+"/"+tc.fam] = true
	}
	for _, p := range Builtin() {
		for _, f := range p.Families {
			if !covered[p.Name+"/"+f.ID] {
				t.Errorf("%s family %s has no key case", p.Name, f.ID)
			}
		}
	}
}

func TestClassifyRejects(t *testing.T) {
	cases := []struct {
		pack string
		db   int
		key  string
	}{
		{"eisland", 0, "user:ban:set"},                        // DB 9 family in DB 0
		{"eisland", 15, "user:ban:set"},                       // no such eIsland database
		{"eisland", 14, "agent:balance:alice"},                // DB 12 family in DB 14
		{"eisland", -1, "announcement:current:v2"},            // negative database
		{"eisland", 9, "user:ban:set2"},                       // extra suffix on a literal key
		{"eisland", 9, "user:ban:se"},                         // truncated literal key
		{"eisland", 0, "announcement:current:v2:"},            // extra suffix
		{"eisland", 1, "server:avatar-data::"},                // empty placeholder
		{"eisland", 12, "agent:balance:"},                     // empty placeholder
		{"eisland", 14, "mg:score:high::alice"},               // empty gameId
		{"eisland", 14, "mg:score:high:2048:"},                // empty userId
		{"eisland", 5, "totp:security:replay:alice:12x:0042"}, // counter not digits
		{"eisland", 2, "verify:code:reset:x@y.z"},             // scene not upper case
		{"eisland", 11, "tmt:quota:monthly:2026071"},          // YYYYMM is six digits
		{"eisland", 11, "tmt:quota:monthly:20267"},
		{"eisland", 0, ""},
		{"eisland", 0, "server:service-status:all"}, // single colon: not Spring's "::"
		{"gateway", 0, "q:tokens:gk_1:2026-07"},
		{"gateway", 0, "q:rps:"},
		{"gateway", 0, "cfg:routing:version:2"},
		{"gateway", 0, "cb:hint:openai"},
		{"vertique", 0, "vertique:rate-limit:v1:" + fp + ":" + hmac + "0"},            // 65 hex
		{"vertique", 0, "vertique:rate-limit:v1:" + fp + ":" + hmac[1:]},              // 63 hex
		{"vertique", 0, "vertique:rate-limit:v1:" + strings.ToUpper(fp) + ":" + hmac}, // upper-case hex
		{"vertique", 0, "vertique:rate-limit:v2:" + fp + ":" + hmac},                  // other version
		{"vertique", 0, "other:ns:v1:" + fp + ":" + hmac},                             // other namespace
		{"vertique", 0, "vertique:rate-limit:v1:" + fp + "0:" + hmac},                 // 9-digit fingerprint
		{"vertique", 0, "vertique:rate-limit:v1:" + fp + ":" + hmac[:63] + "g"},       // not hex
		{"vertique", 0, "xvertique:rate-limit:v1:" + fp + ":" + hmac},                 // prefix
	}
	for _, tc := range cases {
		if f, ok := BuiltinPack(tc.pack).Classifier().Classify(tc.db, tc.key); ok {
			t.Errorf("%s db %d %q: matched %s, want no match", tc.pack, tc.db, tc.key, f.ID)
		}
	}
}

// The priority rule: the most literal bytes win, then declaration order.
func TestPriority(t *testing.T) {
	e := BuiltinPack("eisland").Classifier()
	for key, want := range map[string]string{
		"mg:score:leaderboard:refresh:rate:2048:alice": "mg-leaderboard-refresh-rate",
		"mg:score:leaderboard:refresh":                 "mg-leaderboard", // gameId "refresh"
		"mg:score:leaderboard:refresh:rate:x":          "mg-leaderboard", // refresh pattern needs two more fields
	} {
		if f, _ := e.Classify(14, key); f == nil || f.ID != want {
			t.Errorf("%q: got %v, want %s", key, f, want)
		}
	}
	if f, _ := e.Classify(13, "agent:usage:__models__"); f == nil || f.ID != "agent-usage-models" {
		t.Errorf("agent:usage:__models__: got %v", f)
	}
	// Equal literal length: the first declared wins.
	p := mustLoad(t, "tie.yaml", `
name: tie
families:
  - {id: first, pattern: "a:{x}:c", type: string, ttl: any, domain: d, role: cache}
  - {id: second, pattern: "a:b:{y}", type: string, ttl: any, domain: d, role: cache}
`)
	if f, _ := p.Classifier().Classify(0, "a:b:c"); f == nil || f.ID != "first" {
		t.Errorf("tie: got %v, want first", f)
	}
	if f, _ := p.Classifier().Classify(0, "a:b:d"); f == nil || f.ID != "second" {
		t.Errorf("a:b:d: got %v, want second", f)
	}
}

// Extraction fills placeholders left to right with the shortest value that
// lets the rest match; this pins the documented behaviour on keys where two
// free-text placeholders make the split ambiguous.
func TestExtractionAmbiguity(t *testing.T) {
	e := BuiltinPack("eisland").Classifier()
	m, _ := e.Match(8, "issue-feedback:submit:ops:admin:10.0.0.1")
	if got := m.Map(); got["username"] != "ops" || got["ip"] != "admin:10.0.0.1" {
		t.Errorf("ambiguous split: %v", got)
	}
	m, _ = e.Match(3, "server:wallpaper-my-list::total:ops:admin:sea:static")
	if got := m.Map(); got["ownerUsername"] != "ops" || got["keyword"] != "admin:sea" || got["type"] != "static" {
		t.Errorf("ambiguous split: %v", got)
	}
}

func TestFamilyKeyAndRefs(t *testing.T) {
	e := BuiltinPack("eisland")
	lb := e.Family("mg-leaderboard")
	params := lb.Params.(*LeaderboardParams)
	vars := map[string]string{"gameId": "2048", params.Member: "ops:admin"}
	if k, err := params.Meta.Key(vars); err != nil || k != "mg:score:user-meta:2048:ops:admin" {
		t.Errorf("meta key: %q %v", k, err)
	}
	if k, err := params.HighScore.Key(vars); err != nil || k != "mg:score:high:2048:ops:admin" {
		t.Errorf("high score key: %q %v", k, err)
	}
	if params.Meta.Family.ID != "mg-user-meta" || params.HighScore.Family.ID != "mg-score-high" || params.Retained != 200 {
		t.Errorf("leaderboard params: %+v", params)
	}
	f := e.Family("slider-rate-create-account")
	// Java's default encoder: standard, padded.
	k, err := f.Key(map[string]string{"account": "Zoë:ops/β"})
	if err != nil || k != "verify:slider:rate:create:account:"+b64s("Zoë:ops/β") {
		t.Errorf("slider key: %q %v", k, err)
	}
	if _, err := f.Key(map[string]string{}); err == nil {
		t.Error("missing value: no error")
	}
	if _, err := e.Family("mg-score-high").Key(map[string]string{"gameId": "a:b", "userId": "x"}); err == nil {
		t.Error("colon in a segment placeholder: no error")
	}
	if _, err := e.Family("qweather-quota").Key(map[string]string{"YYYYMM": "2026"}); err == nil {
		t.Error("short fixed-length value: no error")
	}
	bloom := e.Family("user-ban-bloom").Params.(*BloomParams)
	if bloom.Bits != 1_000_003 || bloom.Hashes != 6 || bloom.Members.Family.ID != "user-ban-set" || bloom.Scheme != "crc32-javahash-double" {
		t.Errorf("ban bloom params: %+v", bloom)
	}
	if e.Family("user-ban-set").Params.(*BloomMembersParams).Bloom.Family.ID != "user-ban-bloom" {
		t.Error("ban set → bloom ref")
	}
	win := e.Family("login-failures").Params.(*SlidingWindowParams)
	if lk, _ := win.Lock.Key(map[string]string{"key": "bob"}); lk != "auth:limit:login:lock:bob" || win.Limit != 5 {
		t.Errorf("login window: %+v %q", win, lk)
	}
}

func TestSensitive(t *testing.T) {
	want := map[string]bool{"totp-secret-plain": true, "totp-secret-enc": true, "verify-code": true}
	for _, p := range Builtin() {
		for _, f := range p.Families {
			if f.Sensitive != want[f.ID] {
				t.Errorf("%s/%s: sensitive %v", p.Name, f.ID, f.Sensitive)
			}
		}
	}
}

func TestMatchMapIsACopy(t *testing.T) {
	m, _ := BuiltinPack("gateway").Classifier().Match(0, "cb:hint:openai:gpt-4o")
	a := m.Map()
	a["provider"] = "changed"
	if !maps.Equal(m.Map(), map[string]string{"provider": "openai", "model": "gpt-4o"}) {
		t.Error("Map shares storage")
	}
	if v, ok := m.Get("model"); !ok || v != "gpt-4o" {
		t.Error("Get")
	}
}
