package demo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The eIsland half of the simulator's traffic, one method per user action.

type challenge struct {
	id, account, ip string
	expires         time.Time
}

type pendingOrder struct {
	out, user, channel string
	created            time.Time
}

// submitScore is MiniGameScoreService end to end: rate limit, idempotent
// submit, MQ consumer with its own idempotency and row lock, leaderboard
// update pruned to the top 200, metadata and high-score cache.
func (s *Simulator) submitScore(ctx context.Context, now time.Time) error {
	c := s.db(14)
	g := pick(s.rng, games)
	board := "mg:score:leaderboard:" + g.ID
	user := s.pickUser()
	switch s.rng.IntN(10) {
	case 0, 1:
		user = pick(s.rng, s.players)
	case 2, 3, 4, 5:
		if m, err := c.ZRandMember(ctx, board, 1).Result(); err == nil && len(m) == 1 {
			user = m[0]
		}
	}
	n, err := s.windowCount(ctx, c, "mg:score:submit:rate:"+g.ID+":"+user, 60)
	if err != nil || n > 10 {
		return err
	}
	submit := uuid(s.rng)
	if ok, err := c.SetNX(ctx, "mg:score:idempotency:"+submit, "1", 24*time.Hour).Result(); err != nil || !ok {
		return err
	}
	if ok, err := c.SetNX(ctx, "mg:score:consume:idempotency:"+submit, "1", 24*time.Hour).Result(); err != nil || !ok {
		return err
	}
	if err := s.forget(ctx, c, s.submits.add("mg:score:idempotency:"+submit, "mg:score:consume:idempotency:"+submit)); err != nil {
		return err
	}
	lock := "mg:score:lock:" + g.ID + ":" + user
	if ok, err := s.takeLock(ctx, c, lock, "1", 10*time.Second, time.Duration(200+s.rng.IntN(1500))*time.Millisecond, now); err != nil || !ok {
		return err
	}
	score := g.score(s.rng)
	prev, err := c.ZScore(ctx, board, user).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	best := max(prev, score)
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if score > prev {
			p.ZAdd(ctx, board, redisZ(score, user))
			p.ZRemRangeByRank(ctx, board, 0, -LeaderboardSize-1)
			p.HSet(ctx, "mg:score:user-meta:"+g.ID+":"+user, userMeta(s.rng, score, now)...)
			p.Expire(ctx, "mg:score:user-meta:"+g.ID+":"+user, time.Hour)
		}
		p.Set(ctx, "mg:score:high:"+g.ID+":"+user, int64(best), time.Hour)
		return nil
	})
	return err
}

func (s *Simulator) refreshLeaderboard(ctx context.Context, _ time.Time) error {
	g := pick(s.rng, games)
	_, err := s.windowCount(ctx, s.db(14), "mg:score:leaderboard:refresh:rate:"+g.ID+":"+s.pickUser(), 60)
	return err
}

func (s *Simulator) startSession(ctx context.Context, now time.Time) error {
	k, v, ttl := sessionEntry(s.rng, s.pickUser(), now, now)
	if err := s.db(14).Set(ctx, k, v, ttl).Err(); err != nil {
		return err
	}
	return s.forget(ctx, s.db(14), s.sessions.add(k)) // the oldest game ended
}

// bucket runs the slider token-bucket script and reports whether it allowed.
func (s *Simulator) bucket(ctx context.Context, key string, capacity int, now time.Time) (bool, error) {
	res, err := SliderTokenBucket.Run(ctx, s.db(4), []string{key}, sliderArgs(now.UnixMilli(), capacity)...).Int64Slice()
	if err != nil {
		return false, err
	}
	return len(res) > 0 && res[0] == 1, nil
}

func (s *Simulator) createChallenge(ctx context.Context, now time.Time) error {
	c := s.db(4)
	account, addr := s.pickUser(), s.pickIP()
	tries := 1
	if s.rng.IntN(4) == 0 {
		addr, tries = scraperIP, 6
	}
	for range tries {
		okA, err := s.bucket(ctx, "verify:slider:rate:create:account:"+SliderKeyPart(account), sliderCreateAccount, now)
		if err != nil {
			return err
		}
		okI, err := s.bucket(ctx, "verify:slider:rate:create:ip:"+SliderKeyPart(addr), sliderCreateIP, now)
		if err != nil || !okA || !okI {
			return err
		}
		ch := challenge{id: hexString(s.rng, 32), account: account, ip: addr, expires: now.Add(sliderChallengeTTL)}
		_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "verify:slider:challenge:"+ch.id, 40+s.rng.IntN(220), sliderChallengeTTL)
			p.Set(ctx, "verify:slider:challenge-owner:"+ch.id, account, sliderChallengeTTL)
			p.Set(ctx, "verify:slider:challenge-ip-owner:"+ch.id, addr, sliderChallengeTTL)
			for _, k := range []string{"verify:slider:account:challenges:" + SliderKeyPart(account), "verify:slider:ip:challenges:" + SliderKeyPart(addr)} {
				p.SAdd(ctx, k, ch.id)
				p.Expire(ctx, k, sliderChallengeTTL+10*time.Second)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(s.challenges) < 60 {
			s.challenges = append(s.challenges, ch)
		}
	}
	return nil
}

func (s *Simulator) verifyChallenge(ctx context.Context, now time.Time) error {
	for len(s.challenges) > 0 && now.After(s.challenges[0].expires) {
		s.challenges = s.challenges[1:] // expired by TTL, never answered
	}
	if len(s.challenges) == 0 {
		return nil
	}
	i := s.rng.IntN(len(s.challenges))
	ch := s.challenges[i]
	s.challenges = append(s.challenges[:i], s.challenges[i+1:]...)
	c := s.db(4)
	ok, err := s.bucket(ctx, "verify:slider:rate:verify:ip:"+SliderKeyPart(ch.ip), sliderVerifyIP, now)
	if err != nil || !ok {
		return err
	}
	if ch.ip == scraperIP || s.rng.IntN(5) == 0 {
		_, err1 := s.windowCount(ctx, c, "verify:slider:fail:account:"+SliderKeyPart(ch.account), 600)
		_, err2 := s.windowCount(ctx, c, "verify:slider:fail:ip:"+SliderKeyPart(ch.ip), 600)
		return errors.Join(err1, err2)
	}
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, "verify:slider:challenge:"+ch.id, "verify:slider:challenge-owner:"+ch.id, "verify:slider:challenge-ip-owner:"+ch.id)
		p.SRem(ctx, "verify:slider:account:challenges:"+SliderKeyPart(ch.account), ch.id)
		p.SRem(ctx, "verify:slider:ip:challenges:"+SliderKeyPart(ch.ip), ch.id)
		p.Set(ctx, "verify:slider:sign:"+hexString(s.rng, 40), ch.account+"|"+ch.ip+"|"+ch.id, sliderSignTTL)
		return nil
	})
	return err
}

// createOrder takes the per-user creation lock, then writes the order's
// lifecycle keys, as PaymentService does when a user opens the checkout.
func (s *Simulator) createOrder(ctx context.Context, now time.Time) error {
	c := s.db(10)
	user := s.pickUser()
	channel := pick(s.rng, []string{"wechat", "alipay"})
	lock := pick(s.rng, []string{"payment:lock:create:pro-month:" + user, "payment:lock:create:agent-recharge:" + user,
		"payment:lock:create:test:" + channel + ":" + user})
	if ok, err := s.takeLock(ctx, c, lock, uuid(s.rng), 15*time.Second, time.Duration(300+s.rng.IntN(3000))*time.Millisecond, now); err != nil || !ok {
		return err
	}
	out := outTradeNo(s.rng, now)
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "payment:order:channel:"+out, channel, 30*24*time.Hour)
		p.Set(ctx, "payment:order:receipt-email:"+out, emailOf(user), orderExpire+time.Hour)
		p.Set(ctx, "payment:user:active-order:"+user, out, orderExpire+5*time.Minute)
		return nil
	})
	if err != nil {
		return err
	}
	if len(s.orders) < 50 {
		s.orders = append(s.orders, pendingOrder{out: out, user: user, channel: channel, created: now})
	}
	return s.forget(ctx, c, s.orderKeys.add("payment:order:channel:"+out, "payment:order:receipt-email:"+out))
}

// payOrder is the payment callback: operation lock, dedup flag, order no
// longer active.
func (s *Simulator) payOrder(ctx context.Context, now time.Time) error {
	if len(s.orders) == 0 {
		return nil
	}
	o := s.orders[0]
	s.orders = s.orders[1:]
	if now.Sub(o.created) > orderExpire {
		return nil // the user walked away; the keys expire on their own
	}
	c := s.db(10)
	if ok, err := s.takeLock(ctx, c, "payment:order:op-lock:"+o.out, uuid(s.rng), 15*time.Second, time.Duration(100+s.rng.IntN(900))*time.Millisecond, now); err != nil || !ok {
		return err
	}
	done := "payment:notify:done:" + o.channel + ":" + o.out + ":" + transactionID(s.rng, o.channel, now)
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, done, "1", 30*24*time.Hour)
		p.Del(ctx, "payment:user:active-order:"+o.user)
		return nil
	})
	if err != nil {
		return err
	}
	return s.forget(ctx, c, s.orderKeys.add(done))
}

// loginTargets get most of the failed logins, so that locks actually happen.
var loginTargets = []string{"alice.w", "ops:admin", "李雷", "john smith"}

// failLogin is the sliding window: prune what left the window, record the
// failure, and lock once the window holds the threshold.
func (s *Simulator) failLogin(ctx context.Context, now time.Time) error {
	c := s.db(6)
	user := s.pickUser()
	if s.rng.IntN(3) == 0 {
		user = pick(s.rng, loginTargets)
	}
	key, lock := "auth:limit:login:failures:"+user, "auth:limit:login:lock:"+user
	from := strconv.FormatInt(now.Add(-loginWindow).UnixMilli(), 10)
	var count *redis.IntCmd
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, key, "-inf", "("+from)
		p.ZAdd(ctx, key, redisZ(float64(now.UnixMilli()), windowMember(s.rng, now)))
		p.Expire(ctx, key, loginKeyTTL)
		count = p.ZCount(ctx, key, from, "+inf")
		return nil
	})
	if err != nil || count.Val() < loginThreshold {
		return err
	}
	unlock := now.Add(loginLockFor)
	return c.SetNX(ctx, lock, strconv.FormatInt(unlock.UnixMilli(), 10), loginLockFor).Err()
}

func (s *Simulator) attemptRegister(ctx context.Context, now time.Time) error {
	key := "auth:limit:register:attempts:" + s.pickIP()
	_, err := s.db(6).TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10))
		p.ZAdd(ctx, key, redisZ(float64(now.UnixMilli()), windowMember(s.rng, now)))
		p.Expire(ctx, key, time.Hour)
		return nil
	})
	return err
}

// callAgent bills one agent call the way AgentBalanceRedisService does: the
// deduct script, SETNX initialisation from the database when the balance is
// not cached, then the usage counters.
func (s *Simulator) callAgent(ctx context.Context, now time.Time) error {
	user := s.pickUser()
	model := pick(s.rng, agentModels)
	amount := balance(0.00000001 + s.rng.Float64()*s.rng.Float64()*40)
	res, err := deductBalance(ctx, s.db(12), user, amount, func() string { return balance(s.rng.Float64() * 3000) })
	if err != nil || res == "-3" {
		return err
	}
	in, out := int64(200+s.rng.IntN(6000)), int64(50+s.rng.IntN(1500))
	reasoning := int64(0)
	if model == "deepseek-reasoner" {
		reasoning = out * 3
	}
	usage := "agent:usage:" + model
	_, err = s.db(13).TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, usage, "inputTokens", in)
		p.HIncrBy(ctx, usage, "cachedTokens", in/3)
		p.HIncrBy(ctx, usage, "outputTokens", out)
		p.HIncrBy(ctx, usage, "reasoningTokens", reasoning)
		p.HIncrBy(ctx, usage, "requestCount", 1)
		p.HIncrBy(ctx, usage, "costMicroFen", in+out*4)
		p.SAdd(ctx, "agent:usage:__models__", model)
		return nil
	})
	return err
}

// deductBalance runs the deduct script for user, initialising a missing
// balance with SETNX from initial() and retrying once, as the service does.
// It returns the script's answer: "-3" or "newBal|deducted".
func deductBalance(ctx context.Context, c redis.Cmdable, user, amount string, initial func() string) (string, error) {
	key := []string{"agent:balance:" + user}
	res, err := AgentBalanceDeduct.Run(ctx, c, key, amount).Text()
	if err != nil || res != "-1" {
		return res, err
	}
	if err := c.SetNX(ctx, key[0], initial(), 0).Err(); err != nil {
		return "", err
	}
	return AgentBalanceDeduct.Run(ctx, c, key, amount).Text()
}

func (s *Simulator) rechargeAgent(ctx context.Context, now time.Time) error {
	c := s.db(12)
	user := s.pickUser()
	lock := "payment:lock:create:agent-recharge:" + user
	if ok, err := s.takeLock(ctx, s.db(10), lock, uuid(s.rng), 15*time.Second, time.Second, now); err != nil || !ok {
		return err
	}
	key := "agent:balance:" + user
	cur, err := c.Get(ctx, key).Float64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	return c.Set(ctx, key, balance(cur+float64(pick(s.rng, []int{1000, 3000, 5000, 10000}))), 0).Err()
}

func (s *Simulator) queryWeather(ctx context.Context, now time.Time) error {
	c := s.db(11)
	k, v, ttl := weatherEntry(s.rng, now)
	if err := c.Set(ctx, k, v, ttl).Err(); err != nil {
		return err
	}
	if err := s.addMonthly(ctx, c, "qweather:quota:provider:qweather:"+yyyymm(now), 1, now); err != nil {
		return err
	}
	return s.addMonthly(ctx, c, "tmt:quota:monthly:"+yyyymm(now), int64(20+s.rng.IntN(2000)), now)
}

func (s *Simulator) sendEmailCode(ctx context.Context, now time.Time) error {
	c := s.db(2)
	user := s.pickUser()
	email, scene := emailOf(user), pick(s.rng, verifyScenes)
	if n, err := c.Exists(ctx, "verify:cooldown:"+scene+":"+email).Result(); err != nil || n > 0 {
		return err
	}
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "verify:code:"+scene+":"+email, codeHash(scene, email, fmt.Sprintf("%06d", s.rng.IntN(1e6))), 5*time.Minute)
		p.Del(ctx, "verify:attempts:"+scene+":"+email)
		p.Set(ctx, "verify:cooldown:"+scene+":"+email, "1", time.Minute)
		return nil
	})
	if err != nil {
		return err
	}
	_, err1 := s.windowCount(ctx, c, "verify:rate:ip:"+s.pickIP(), 3600)
	_, err2 := s.windowCount(ctx, c, "verify:rate:email:hour:"+email, 3600)
	_, err3 := s.windowCount(ctx, c, "verify:rate:email:day:"+email, int(endOfDay(now).Sub(now).Seconds())+1)
	_, err4 := s.windowCount(ctx, c, "identity:rate:"+user, 300)
	return errors.Join(err1, err2, err3, err4)
}

func (s *Simulator) verifyTOTP(ctx context.Context, now time.Time) error {
	c := s.db(5)
	user := s.pickUser()
	_, err1 := s.windowCount(ctx, c, "totp:security:rate:user:"+user, 60)
	_, err2 := s.windowCount(ctx, c, "totp:security:rate:ip:"+s.pickIP(), 60)
	key := fmt.Sprintf("totp:security:replay:%s:%d:%06d", user, now.Unix()/30, s.rng.IntN(1e6))
	err3 := c.SetNX(ctx, key, "1", 120*time.Second).Err()
	var err4 error
	if s.rng.IntN(4) == 0 {
		_, err4 = s.windowCount(ctx, c, "totp:security:fail:"+user, 600)
	}
	return errors.Join(err1, err2, err3, err4)
}

func (s *Simulator) useNonce(ctx context.Context, now time.Time) error {
	uri := pick(s.rng, replayURIs)
	principal := s.pickUser()
	if strings.HasPrefix(uri, "POST:") && s.rng.IntN(2) == 0 {
		principal = "anonymous"
	}
	key := "auth:replay:" + principal + ":" + uri + ":" + hexString(s.rng, 24)
	return s.db(6).SetNX(ctx, key, strconv.FormatInt(now.UnixMilli(), 10), 5*time.Minute).Err()
}

func (s *Simulator) upload(ctx context.Context, now time.Time) error {
	user := s.pickUser()
	var errs []error
	for _, k := range []string{"upload:limit:user-avatar:ip:" + s.pickIP(), "upload:limit:user-avatar:account:" + user, "wallpaper:upload:" + user} {
		_, err := s.windowCount(ctx, s.db(7), k, 3600)
		errs = append(errs, err)
	}
	if s.rng.IntN(4) == 0 {
		_, err := s.windowCount(ctx, s.db(8), "issue-feedback:submit:"+user+":"+s.pickIP(), 3600)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
