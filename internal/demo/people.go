package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Hostile usernames the console must render inert. Each one is a real way
// user input reaches key names: a colon (the key separator), spaces, CJK,
// characters outside the BMP, and markup with both kinds of quotes.
var hostileUsers = []string{
	"李雷",
	"韩梅梅",
	"ops:admin",
	"john smith",
	`eve"><script>alert(1)</script>'`,
	"🦊fox",
}

// regularUsers come first so the well-known accounts exist in every domain.
var regularUsers = []string{
	"alice.w", "bob_chen", "zhangwei88", "liuyang", "wangfang", "chenjie", "mika.t", "sakura_k",
	"devon", "jntm", "kevin.l", "xiaoming", "yuki_n", "oliver.h", "emma_r", "noah.k",
	"liam.z", "sophia", "mia.ch", "lucas.p", "ethan_w", "ava_x", "isabella", "mason.y",
	"harper", "zhao.lei", "sun_li", "zhou.xun", "wu_hao", "huang.min",
}

var givenNames = []string{
	"wei", "fang", "jing", "lei", "min", "jun", "yan", "tao", "hui", "xin", "ling", "hao", "chen",
	"yu", "qiang", "alex", "sam", "jamie", "chris", "taylor", "riley", "morgan", "kai", "leo",
	"nina", "omar", "ivan", "sara", "tom", "anna", "ben", "lena", "max", "zoe",
}

var nameStyles = []string{"%s%d", "%s_%d", "%s.%d", "x%s%d", "%s%dcn", "the_%s%d"}

// users returns n distinct usernames: the hostile and regular ones first,
// then generated ones, in a fixed order for a given rng.
func users(rng *rand.Rand, n int) []string {
	out := append(append([]string{}, hostileUsers...), regularUsers...)
	seen := map[string]bool{}
	for _, u := range out {
		seen[u] = true
	}
	for len(out) < n {
		u := fmt.Sprintf(nameStyles[rng.IntN(len(nameStyles))], givenNames[rng.IntN(len(givenNames))], rng.IntN(2000))
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out[:n]
}

var mailDomains = []string{"gmail.com", "qq.com", "163.com", "outlook.com", "foxmail.com", "icloud.com", "eisland.dev"}

// emailOf gives a stable address for a username; hostile names keep their
// hostility where an address could plausibly carry it.
func emailOf(user string) string {
	switch user {
	case "李雷":
		return "lilei@163.com"
	case "韩梅梅":
		return "hanmeimei@qq.com"
	case "ops:admin":
		return "ops+admin@eisland.dev"
	case "john smith":
		return "john.smith@gmail.com"
	case `eve"><script>alert(1)</script>'`:
		return `"eve<script>"@mailinator.com`
	case "🦊fox":
		return "fox@icloud.com"
	}
	h := 0
	for _, c := range user {
		h = h*31 + int(c)
	}
	if h < 0 {
		h = -h
	}
	return strings.ReplaceAll(user, "_", ".") + "@" + mailDomains[h%len(mailDomains)]
}

// ip returns a client address from the documentation ranges, with an
// occasional IPv6 address because its colons collide with the key separator.
func ip(rng *rand.Rand) string {
	switch rng.IntN(10) {
	case 0:
		return fmt.Sprintf("2001:db8:%x::%x", rng.IntN(0xffff), rng.IntN(0xffff))
	case 1, 2, 3:
		return fmt.Sprintf("203.0.113.%d", 1+rng.IntN(254))
	case 4, 5, 6:
		return fmt.Sprintf("198.51.100.%d", 1+rng.IntN(254))
	default:
		return fmt.Sprintf("192.0.2.%d", 1+rng.IntN(254))
	}
}

func uuid(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func hexString(rng *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[rng.IntN(16)]
	}
	return string(b)
}

func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }
