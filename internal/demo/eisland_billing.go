package demo

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// eIsland's payment, quota, balance and usage data (DB 10–13).

// outTradeNo is eIsland's order number: prefix, creation time in UTC+8, serial.
func outTradeNo(rng *rand.Rand, created time.Time) string {
	return "EI" + created.In(cst).Format("20060102150405") + fmt.Sprintf("%04d", rng.IntN(10000))
}

func transactionID(rng *rand.Rand, channel string, at time.Time) string {
	if channel == "wechat" {
		return fmt.Sprintf("42000%s%s", at.In(cst).Format("20060102"), hexDigits(rng, 15))
	}
	return at.In(cst).Format("20060102") + "22001" + hexDigits(rng, 15)
}

func hexDigits(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + rng.IntN(10))
	}
	return string(b)
}

const orderExpire = 15 * time.Minute

// DB 10: pricing, order lifecycle, notification dedup, creation locks.
func seedPayment(s *seeder) {
	s.set("payment:pricing:pro-month:amount-fen", "1500", 0)
	s.set("payment:pricing:free:desc", "基础功能永久免费", 0)
	s.set("payment:pricing:free:features", "每日 20 次 AI 对话\n标准壁纸\n基础工具箱", 0)
	s.set("payment:pricing:pro:desc", "Pro 会员：解锁全部高级功能", 0)
	s.set("payment:pricing:pro:features", "无限 AI 对话\n4K 动态壁纸\n优先客服\n云同步", 0)

	for range 36 {
		u := pick(s.rng, s.users[:120])
		channel := pick(s.rng, []string{"wechat", "alipay"})
		age := time.Duration(s.rng.Int64N(int64(25 * 24 * time.Hour)))
		if s.rng.IntN(5) == 0 {
			age = time.Duration(s.rng.Int64N(int64(70 * time.Minute)))
		}
		created := s.now.Add(-age)
		out := outTradeNo(s.rng, created)
		s.set("payment:order:channel:"+out, channel, remaining(30*24*time.Hour, age))
		if age < orderExpire+time.Hour {
			s.set("payment:order:receipt-email:"+out, emailOf(u), remaining(orderExpire+time.Hour, age))
		}
		paid := age > 5*time.Minute && s.rng.IntN(4) != 0
		if !paid && age < orderExpire+5*time.Minute {
			s.set("payment:user:active-order:"+u, out, remaining(orderExpire+5*time.Minute, age))
		}
		if paid {
			at := created.Add(time.Duration(30+s.rng.IntN(240)) * time.Second)
			s.set("payment:notify:done:"+channel+":"+out+":"+transactionID(s.rng, channel, at), "1", remaining(30*24*time.Hour, age))
		}
		if age < 15*time.Second {
			s.set("payment:order:op-lock:"+out, uuid(s.rng), remaining(15*time.Second, age))
		}
	}
	s.set("payment:order:op-lock:"+outTradeNo(s.rng, s.now.Add(-3*time.Second)), uuid(s.rng), s.held(15*time.Second))
	s.set("payment:lock:create:pro-month:"+pick(s.rng, s.users[:30]), uuid(s.rng), s.held(15*time.Second))
	s.set("payment:lock:create:agent-recharge:李雷", uuid(s.rng), s.held(15*time.Second))
	s.set("payment:lock:create:test:alipay:devon", uuid(s.rng), s.held(15*time.Second))
}

var weatherLocations = []struct{ id, name string }{
	{"101010100", "北京"}, {"101020100", "上海"}, {"101280101", "广州"}, {"101280601", "深圳"},
	{"101210101", "杭州"}, {"101270101", "成都"}, {"101200101", "武汉"}, {"101190101", "南京"},
	{"116.41,39.92", "北京"}, {"121.47,31.23", "上海"},
}

// weatherEntry is one cached QWeather answer; the simulator refreshes them.
func weatherEntry(rng *rand.Rand, now time.Time) (key, value string, ttl time.Duration) {
	loc, lang := pick(rng, weatherLocations), pick(rng, []string{"zh", "en"})
	switch rng.IntN(3) {
	case 0:
		var days []any
		for d := range 3 {
			hi := 24 + rng.IntN(12)
			days = append(days, map[string]any{"fxDate": now.In(cst).AddDate(0, 0, d).Format("2006-01-02"),
				"tempMax": strconv.Itoa(hi), "tempMin": strconv.Itoa(hi - 4 - rng.IntN(6)),
				"textDay": pick(rng, []string{"多云", "晴", "雷阵雨", "小雨"}), "humidity": strconv.Itoa(50 + rng.IntN(45))})
		}
		unit := pick(rng, []string{"m", "i"})
		return "qweather:daily3d:" + loc.id + ":" + lang + ":" + unit, js(map[string]any{"code": "200",
			"updateTime": now.In(cst).Format("2006-01-02T15:04-07:00"), "daily": days}), 600 * time.Second
	case 1:
		var alerts []any
		if rng.IntN(3) == 0 {
			alerts = append(alerts, map[string]any{"id": hexString(rng, 16), "sender": loc.name + "市气象台",
				"title": loc.name + "市气象台发布高温橙色预警", "severity": "Severe", "type": "1005"})
		}
		return "qweather:alerts:" + loc.id + ":" + lang, js(map[string]any{"code": "200", "warning": alerts}), 180 * time.Second
	default:
		q := pick(rng, []string{"beijing", "上海", "shen", "hangzhou", "Tokyo", "成都", "wuhan", "nanj"})
		return "qweather:geo:city:" + q + ":" + lang, js(map[string]any{"code": "200",
			"location": []any{map[string]any{"name": loc.name, "id": loc.id, "country": "中国", "tz": "Asia/Shanghai"}}}), 600 * time.Second
	}
}

// QWeatherNearLimit is the least the demo's QWeather quota starts at: 92%
// of the plan's 50,000 calls.
const QWeatherNearLimit = 46_000

// DB 11: weather caches and the two monthly quotas.
func seedWeather(s *seeder) {
	for range 45 {
		k, v, ttl := weatherEntry(s.rng, s.now)
		s.set(k, v, s.left(ttl))
	}
	dayOfMonth := s.now.In(cst).Day()
	toMonthEnd := endOfMonth(s.now).Sub(s.now)
	// The weather page is busy this month: its QWeather plan is near its
	// 50,000 calls (92–96%), the budget the quotas page must put first.
	s.set("qweather:quota:provider:qweather:"+yyyymm(s.now), max(dayOfMonth*1200, QWeatherNearLimit+s.rng.IntN(2_000)), toMonthEnd)
	s.set("tmt:quota:monthly:"+yyyymm(s.now), dayOfMonth*110_000+s.rng.IntN(90_000), toMonthEnd)
}

// balance formats fen with the 8 decimals the deduct script writes.
func balance(fen float64) string { return strconv.FormatFloat(fen, 'f', 8, 64) }

// DB 12: agent balances, some nearly or entirely spent.
func seedBalances(s *seeder) {
	for i, u := range s.some(70) {
		var fen float64
		switch {
		case i == 0:
			fen = 0
		case i < 6:
			fen = s.rng.Float64() * 2
		default:
			fen = s.rng.Float64() * float64(pick(s.rng, []int{500, 1500, 5000, 30000}))
		}
		s.set("agent:balance:"+u, balance(fen), 0)
	}
	for _, u := range []string{"李雷", "john smith", "devon", "alice.w"} {
		s.set("agent:balance:"+u, balance(s.rng.Float64()*3000), 0)
	}
}

var agentModels = []string{"gpt-4o", "gpt-4o-mini", "deepseek-chat", "deepseek-reasoner", "claude-3-5-sonnet", "qwen-max", "glm-4-plus"}

// agentPricing is fen per million tokens for each model (input, cached, output).
func agentPricing(model string) map[string]any {
	in := map[string]int{"gpt-4o": 1800, "gpt-4o-mini": 110, "deepseek-chat": 200, "deepseek-reasoner": 400,
		"claude-3-5-sonnet": 2200, "qwen-max": 240, "glm-4-plus": 500}[model]
	return map[string]any{"@class": entityPkg + "AgentModelPricing", "modelName": model, "inputPriceFen": in,
		"cachedInputPriceFen": in / 4, "outputPriceFen": in * 4, "reasoningPriceFen": in * 4, "enabled": true}
}

// pricingEntry is one of DB 13's pricing caches.
func pricingEntry(rng *rand.Rand) entry {
	if rng.IntN(3) > 0 {
		return agentPricingEntry(pick(rng, agentModels))
	}
	return translatePricingEntry(pick(rng, translateServices))
}

var translateServices = []string{"tencent-tmt", "deepl", "baidu-fanyi"}

func agentPricingEntry(model string) entry {
	return entry{"agent:pricing:" + model, js(agentPricing(model)), 30 * time.Minute}
}

func translatePricingEntry(svc string) entry {
	return entry{"toolbox:translate:pricing:" + svc, js(map[string]any{
		"@class":                   entityPkg + "ToolboxTranslatePricing",
		"serviceName":              svc,
		"pricePerThousandCharsFen": map[string]int{"tencent-tmt": 6, "deepl": 25, "baidu-fanyi": 5}[svc],
		"enabled":                  svc != "baidu-fanyi",
	}), 30 * time.Minute}
}

// DB 13: usage counters, the model registry, pricing caches.
func seedAgentUsage(s *seeder) {
	for _, m := range agentModels {
		req := 2000 + s.rng.IntN(90000)
		in := req * (800 + s.rng.IntN(2400))
		out := req * (200 + s.rng.IntN(900))
		reasoning := 0
		if m == "deepseek-reasoner" {
			reasoning = out * 3
		}
		s.p.HSet(s.ctx, "agent:usage:"+m, "inputTokens", in, "cachedTokens", in/3, "outputTokens", out,
			"reasoningTokens", reasoning, "requestCount", req, "costMicroFen", (in+out*4)*(1+s.rng.IntN(20)))
		s.p.SAdd(s.ctx, "agent:usage:__models__", m)
	}
	entries := []entry{}
	for _, m := range agentModels[:5] {
		entries = append(entries, agentPricingEntry(m))
	}
	for _, svc := range translateServices {
		entries = append(entries, translatePricingEntry(svc))
	}
	for _, e := range entries {
		s.set(e.key, e.value, s.left(e.ttl))
	}
}
