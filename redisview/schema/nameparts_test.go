package schema

import (
	"encoding/base64"
	"testing"
)

const partsPack = `
name: parts
families:
  - {id: acc, db: 0, pattern: "acc:{account:base64url}", type: string, ttl: any, domain: d, role: cache}
  - {id: b64, db: 0, pattern: "b64:{account:base64}", type: string, ttl: any, domain: d, role: cache}
  - {id: month, db: 0, pattern: "month:{YYYYMM:digits6}", type: string, ttl: any, domain: d, role: cache}
  - {id: day, db: 0, pattern: "day:{yyyyMMdd:digits8}", type: string, ttl: any, domain: d, role: cache}
  - {id: win, db: 0, pattern: "win:{user}:{window:digits}", type: string, ttl: any, domain: d, role: cache}
  - {id: at, db: 0, pattern: "at:{createdAt}", type: string, ttl: any, domain: d, role: cache}
  - {id: page, db: 0, pattern: "page:{n:digits}", type: string, ttl: any, domain: d, role: cache}
  - {id: hex, db: 0, pattern: "hex:{fp:hex8}", type: string, ttl: any, domain: d, role: cache}
`

func TestNameParts(t *testing.T) {
	cls := NewClassifier(mustLoad(t, "parts.yaml", partsPack))
	b64 := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct {
		key  string
		want []NamePart
	}{
		{"acc:" + b64([]byte("ada@example.com")), []NamePart{{"account", "base64url", b64([]byte("ada@example.com")), "ada@example.com", "base64url, decoded (UTF-8 text)"}}},
		{"acc:" + b64([]byte("<b>Zoë</b>")), []NamePart{{"account", "base64url", b64([]byte("<b>Zoë</b>")), "<b>Zoë</b>", "base64url, decoded (UTF-8 text)"}}},
		// Binary once decoded: kept as is, not shown as bytes.
		{"acc:" + b64([]byte{0xff, 0xfe, 0x01}), []NamePart{{"account", "base64url", b64([]byte{0xff, 0xfe, 0x01}), "", "not base64url of UTF-8 text: kept as is"}}},
		// base64 in each of its four encodings reads as the same text.
		{"b64:Wm/DqzpvcHMvzrI=", []NamePart{{"account", "base64", "Wm/DqzpvcHMvzrI=", "Zoë:ops/β", "base64, decoded (UTF-8 text)"}}},
		{"b64:Wm/DqzpvcHMvzrI", []NamePart{{"account", "base64", "Wm/DqzpvcHMvzrI", "Zoë:ops/β", "base64, decoded (UTF-8 text)"}}},
		{"b64:Wm_DqzpvcHMvzrI=", []NamePart{{"account", "base64", "Wm_DqzpvcHMvzrI=", "Zoë:ops/β", "base64, decoded (UTF-8 text)"}}},
		{"b64:Wm_DqzpvcHMvzrI", []NamePart{{"account", "base64", "Wm_DqzpvcHMvzrI", "Zoë:ops/β", "base64, decoded (UTF-8 text)"}}},
		{"b64:5byg5LiJOnZpcA==", []NamePart{{"account", "base64", "5byg5LiJOnZpcA==", "张三:vip", "base64, decoded (UTF-8 text)"}}},
		{"acc:5byg5LiJOnZpcA==", []NamePart{{"account", "base64url", "5byg5LiJOnZpcA==", "张三:vip", "base64url, decoded (UTF-8 text)"}}},
		{"month:202611", []NamePart{{"YYYYMM", "digits", "202611", "November 2026", "period yyyyMM"}}},
		{"month:202613", []NamePart{{"YYYYMM", "digits", "202613", "", ""}}},
		{"month:189912", []NamePart{{"YYYYMM", "digits", "189912", "", ""}}},
		{"day:20261129", []NamePart{{"yyyyMMdd", "digits", "20261129", "29 November 2026", "period yyyyMMdd"}}},
		{"day:20260231", []NamePart{{"yyyyMMdd", "digits", "20260231", "", ""}}},
		{"win:ada:1764426600", []NamePart{{"user", "any", "ada", "", ""}, {"window", "digits", "1764426600", "2025-11-29 14:30:00 UTC", "epoch seconds"}}},
		{"win:ada:1764426600123", []NamePart{{"user", "any", "ada", "", ""}, {"window", "digits", "1764426600123", "2025-11-29 14:30:00.123 UTC", "epoch milliseconds"}}},
		// Before 2000 and after 2100 is no time.
		{"win:ada:946684799", []NamePart{{"user", "any", "ada", "", ""}, {"window", "digits", "946684799", "", ""}}},
		{"win:ada:4102444800", []NamePart{{"user", "any", "ada", "", ""}, {"window", "digits", "4102444800", "", ""}}},
		{"at:1764426600", []NamePart{{"createdAt", "any", "1764426600", "2025-11-29 14:30:00 UTC", "epoch seconds"}}},
		{"at:x1764426600", []NamePart{{"createdAt", "any", "x1764426600", "", ""}}},
		{"page:2", []NamePart{{"n", "digits", "2", "", ""}}},
		{"hex:00c0ffee", []NamePart{{"fp", "hex", "00c0ffee", "", "hex, kept as is"}}},
	} {
		m, ok := cls.Match(0, tc.key)
		if !ok {
			t.Errorf("%q: no match", tc.key)
			continue
		}
		got := NameParts(m)
		if len(got) != len(tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.key, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q part %d: %+v, want %+v", tc.key, i, got[i], tc.want[i])
			}
		}
	}
	if NameParts(Match{}) != nil {
		t.Error("an unmatched key has name parts")
	}
}

// A name that is not a time's or a period's is not read as one.
func TestTimeName(t *testing.T) {
	for name, want := range map[string]bool{"ts": true, "window": true, "created_at": true, "expireAt": true, "epoch_ms": true, "windowStart": false,
		"user": false, "format": false, "stats": false, "seat": false, "n": false, "startTime": true} {
		if timeName(name) != want {
			t.Errorf("timeName(%q) = %v", name, !want)
		}
	}
}
