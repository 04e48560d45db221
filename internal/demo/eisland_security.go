package demo

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// eIsland's verification, CAPTCHA, TOTP, login and abuse limits, and bans
// (DB 2, 4–9).

var verifyScenes = []string{"REGISTER", "LOGIN", "RESET_PASSWORD", "CHANGE_EMAIL", "UNREGISTER"}

// DB 2: email and identity verification.
func seedVerification(s *seeder) {
	const codeTTL = 5 * time.Minute
	for _, u := range s.some(26) {
		email, scene := emailOf(u), pick(s.rng, verifyScenes)
		ttl := s.left(codeTTL)
		s.set("verify:code:"+scene+":"+email, codeHash(scene, email, fmt.Sprintf("%06d", s.rng.IntN(1e6))), ttl)
		if s.rng.IntN(5) < 2 {
			s.set("verify:attempts:"+scene+":"+email, 1+s.rng.IntN(5), ttl)
		}
		if sent := codeTTL - ttl; sent < time.Minute {
			s.set("verify:cooldown:"+scene+":"+email, "1", time.Minute-sent)
		}
		s.set("verify:rate:email:hour:"+email, 1+s.rng.IntN(3), s.left(time.Hour))
		s.set("verify:rate:email:day:"+email, 1+s.rng.IntN(12), endOfDay(s.now).Sub(s.now))
	}
	for range 15 {
		s.set("verify:rate:ip:"+ip(s.rng), 1+s.rng.IntN(3), s.left(time.Hour))
	}
	for _, u := range s.some(8) {
		s.set("identity:rate:"+u, 1+s.rng.IntN(3), s.left(300*time.Second))
	}
	for _, u := range s.some(22) {
		s.set("identity:verified:"+u, strconv.Itoa(min(1, s.rng.IntN(5))), s.left(time.Hour))
	}
}

// codeHash is how eIsland stores a verification code: never the code itself.
func codeHash(scene, email, code string) string {
	sum := sha256.Sum256([]byte("eisland-demo-pepper:" + scene + ":" + email + ":" + code))
	return hex.EncodeToString(sum[:])
}

// Slider CAPTCHA limits (DESIGN.md): capacity per 60 s window.
const (
	sliderWindowSeconds = 60
	sliderCreateAccount = 12
	sliderCreateIP      = 24
	sliderVerifyIP      = 60
	sliderChallengeTTL  = 120 * time.Second
	sliderSignTTL       = min(sliderChallengeTTL, 120*time.Second)
)

// scraperIP hammers the CAPTCHA so that one bucket is always near empty.
const scraperIP = "198.51.100.66"

// SliderKeyPart is how an account or IP enters a slider key: base64, which
// keeps ':' and other separators out of the key. The seed names no variant,
// so the demo writes the two a Java service would: Base64.getEncoder()
// (standard, padded: Java's default) for a name whose CRC-32 is even, and
// getUrlEncoder().withoutPadding() for one whose CRC-32 is odd, as if two
// releases of the service shared the database. A name's keys always take
// its one encoding; Keydeck must find both.
func SliderKeyPart(s string) string {
	if crc32.ChecksumIEEE([]byte(s))%2 == 1 {
		return base64.RawURLEncoding.EncodeToString([]byte(s))
	}
	return base64.StdEncoding.EncodeToString([]byte(s))
}

// sliderArgs are the token-bucket script's ARGV for one hit at nowMs.
func sliderArgs(nowMs int64, capacity int) []any {
	refill := float64(capacity) / sliderWindowSeconds / 1000
	return []any{nowMs, capacity, strconv.FormatFloat(refill, 'f', -1, 64), 1, max(30, sliderWindowSeconds*2)}
}

// DB 4: challenges in flight, their owner indexes, sign tickets, token
// buckets written by the service's own script, and fail counters.
func seedSlider(s *seeder) {
	accounts := s.some(14)
	accounts = append(accounts, emailOf(accounts[0]), emailOf(accounts[1])) // some log in by email
	// an owner index outlives its newest challenge by 10 s
	indexTTL := map[string]time.Duration{}
	var indexes []string
	for i := range 18 {
		account, addr := accounts[i%len(accounts)], ip(s.rng)
		id := hexString(s.rng, 32)
		ttl := s.left(sliderChallengeTTL)
		s.set("verify:slider:challenge:"+id, 40+s.rng.IntN(220), ttl)
		s.set("verify:slider:challenge-owner:"+id, account, ttl)
		s.set("verify:slider:challenge-ip-owner:"+id, addr, ttl)
		ak, ik := "verify:slider:account:challenges:"+SliderKeyPart(account), "verify:slider:ip:challenges:"+SliderKeyPart(addr)
		s.p.SAdd(s.ctx, ak, id)
		s.p.SAdd(s.ctx, ik, id)
		for _, k := range []string{ak, ik} {
			if _, ok := indexTTL[k]; !ok {
				indexes = append(indexes, k)
			}
			indexTTL[k] = max(indexTTL[k], ttl+10*time.Second)
		}
	}
	for _, k := range indexes {
		s.p.PExpire(s.ctx, k, indexTTL[k])
	}
	for range 5 {
		account, addr := pick(s.rng, accounts), ip(s.rng)
		s.set("verify:slider:sign:"+hexString(s.rng, 40), account+"|"+addr+"|"+hexString(s.rng, 32), s.left(sliderSignTTL))
	}

	nowMs := s.now.UnixMilli()
	hits := func(key string, capacity, n int, span time.Duration) {
		start := nowMs - span.Milliseconds()
		for i := range n {
			at := start + int64(i)*span.Milliseconds()/int64(max(1, n))
			SliderTokenBucket.Eval(s.ctx, s.p, []string{key}, sliderArgs(at, capacity)...)
		}
	}
	for _, a := range accounts {
		hits("verify:slider:rate:create:account:"+SliderKeyPart(a), sliderCreateAccount, 1+s.rng.IntN(6), 50*time.Second)
	}
	for range 16 {
		addr := ip(s.rng)
		hits("verify:slider:rate:create:ip:"+SliderKeyPart(addr), sliderCreateIP, 1+s.rng.IntN(10), 50*time.Second)
		hits("verify:slider:rate:verify:ip:"+SliderKeyPart(addr), sliderVerifyIP, 1+s.rng.IntN(20), 50*time.Second)
	}
	// A scraper that has emptied its buckets: the "CAPTCHA says slow down" ticket.
	bot := scraperIP
	hits("verify:slider:rate:create:ip:"+SliderKeyPart(bot), sliderCreateIP, 30, 15*time.Second)
	hits("verify:slider:rate:verify:ip:"+SliderKeyPart(bot), sliderVerifyIP, 75, 20*time.Second)
	hits("verify:slider:rate:create:account:"+SliderKeyPart("ops:admin"), sliderCreateAccount, 14, 10*time.Second)

	for _, a := range accounts[:5] {
		s.set("verify:slider:fail:account:"+SliderKeyPart(a), 1+s.rng.IntN(3), s.left(600*time.Second))
	}
	s.set("verify:slider:fail:ip:"+SliderKeyPart(bot), 3, s.left(600*time.Second))
	for range 4 {
		s.set("verify:slider:fail:ip:"+SliderKeyPart(ip(s.rng)), 1+s.rng.IntN(2), s.left(600*time.Second))
	}
}

// DB 5: TOTP secrets (sensitive), failure, replay and rate keys.
func seedTOTP(s *seeder) {
	for i, u := range s.some(18) {
		if i < 5 {
			secret := make([]byte, 20)
			for j := range secret {
				secret[j] = byte(s.rng.UintN(256))
			}
			s.set("totp:security:secret:plain:"+u, base32.StdEncoding.EncodeToString(secret), s.left(60*time.Second))
		}
		s.set("totp:security:secret:enc:"+u, totpCiphertext(s.rng), s.left(24*time.Hour))
		if i%4 == 1 {
			s.set("totp:security:fail:"+u, 1+s.rng.IntN(5), s.left(600*time.Second))
		}
		if i%2 == 0 {
			counter := s.now.Unix()/30 - int64(s.rng.IntN(4))
			s.set(fmt.Sprintf("totp:security:replay:%s:%d:%06d", u, counter, s.rng.IntN(1e6)), "1", s.left(120*time.Second))
			s.set("totp:security:rate:user:"+u, 1+s.rng.IntN(8), s.left(60*time.Second))
		}
	}
	for range 8 {
		s.set("totp:security:rate:ip:"+ip(s.rng), 1+s.rng.IntN(20), s.left(60*time.Second))
	}
}

// totpCiphertext stands in for an AES-GCM sealed secret: IV, ciphertext, tag.
func totpCiphertext(rng *rand.Rand) string {
	blob := make([]byte, 12+32+16)
	for i := range blob {
		blob[i] = byte(rng.UintN(256))
	}
	return base64.StdEncoding.EncodeToString(blob)
}

// Login window (DESIGN.md): 5 failures in 5 minutes lock the account for 10.
const (
	loginWindow    = 5 * time.Minute
	loginThreshold = 5
	loginLockFor   = 10 * time.Minute
	loginKeyTTL    = 15 * time.Minute
)

// windowMember is the ZSET member of a sliding window: the epoch-ms score and
// a nanoTime tail that keeps two hits in the same millisecond distinct.
func windowMember(rng *rand.Rand, t time.Time) string {
	return fmt.Sprintf("%d:%d", t.UnixMilli(), 3_000_000_000_000+rng.Int64N(9e14))
}

var replayURIs = []string{"POST:/api/payment/notify/wechat", "POST:/api/payment/notify/alipay", "PUT:/api/user/profile",
	"POST:/api/user/email/change", "POST:/api/agent/recharge", "POST:/api/user/avatar", "DELETE:/api/user/account"}

// DB 6: login sliding windows and locks, registration windows, replay nonces.
func seedAuthLimits(s *seeder) {
	locked := []string{"ops:admin", "bob_chen", s.users[40]}
	failing := append([]string{}, locked...)
	for _, u := range s.some(21) {
		if len(failing) < 21 && !slices.Contains(locked, u) {
			failing = append(failing, u)
		}
	}
	for i, u := range failing {
		// Each failure prunes the window, so a key only holds the failures
		// of the last five minutes before its newest one.
		last := s.now.Add(-time.Duration(s.rng.Int64N(int64(loginKeyTTL - time.Minute))))
		n := 1 + s.rng.IntN(loginThreshold-1)
		if i < len(locked) {
			last = s.now.Add(-time.Duration(s.rng.Int64N(int64(4 * time.Minute))))
			n = loginThreshold // the fifth failure locked the account
		}
		for j := range n {
			t := last.Add(-time.Duration(j) * (loginWindow - 20*time.Second) / time.Duration(n))
			s.p.ZAdd(s.ctx, "auth:limit:login:failures:"+u, redisZ(float64(t.UnixMilli()), windowMember(s.rng, t)))
		}
		s.p.PExpire(s.ctx, "auth:limit:login:failures:"+u, remaining(loginKeyTTL, s.now.Sub(last)))
		if i < len(locked) {
			unlock := last.Add(loginLockFor)
			s.set("auth:limit:login:lock:"+u, strconv.FormatInt(unlock.UnixMilli(), 10), unlock.Sub(s.now))
		}
	}
	for range 12 {
		addr := ip(s.rng)
		var last time.Time
		for range 1 + s.rng.IntN(6) {
			t := s.ago(time.Hour)
			s.p.ZAdd(s.ctx, "auth:limit:register:attempts:"+addr, redisZ(float64(t.UnixMilli()), windowMember(s.rng, t)))
			if t.After(last) {
				last = t
			}
		}
		s.p.PExpire(s.ctx, "auth:limit:register:attempts:"+addr, remaining(time.Hour, s.now.Sub(last)))
	}
	for range 40 {
		principal := pick(s.rng, s.users[:60])
		uri := pick(s.rng, replayURIs)
		if strings.Contains(uri, "notify") {
			principal = "anonymous"
		}
		ttl := s.left(5 * time.Minute)
		at := s.now.Add(ttl - 5*time.Minute)
		s.set("auth:replay:"+principal+":"+uri+":"+hexString(s.rng, 24), strconv.FormatInt(at.UnixMilli(), 10), ttl)
	}
}

// DB 7: upload counters.
func seedUploads(s *seeder) {
	for range 10 {
		s.set("upload:limit:user-avatar:ip:"+ip(s.rng), 1+s.rng.IntN(3), s.left(time.Hour))
	}
	for _, u := range s.some(10) {
		s.set("upload:limit:user-avatar:account:"+u, 1+s.rng.IntN(3), s.left(time.Hour))
	}
	for _, u := range s.some(12) {
		s.set("wallpaper:upload:"+u, 1+s.rng.IntN(5), s.left(time.Hour))
	}
}

// DB 8: feedback counters; the IPv6 addresses put extra colons in the key.
func seedFeedback(s *seeder) {
	for _, u := range s.some(15) {
		s.set("issue-feedback:submit:"+u+":"+ip(s.rng), 1+s.rng.IntN(3), s.left(time.Hour))
	}
}

// DB 9: banned users, including the hostile names the console must escape.
func seedBans(s *seeder) {
	banned := []string{`eve"><script>alert(1)</script>'`, "🦊fox", "韩梅梅", "ops:root admin"}
	for _, u := range s.users[60:] {
		if len(banned) == 26 {
			break
		}
		if s.rng.IntN(6) == 0 {
			banned = append(banned, u)
		}
	}
	s.bloom("user:ban:bloom", "user:ban:set", UserBanBloomBits, banned)
}
