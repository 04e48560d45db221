package action

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Names are bytes: whatever a key name, member or field holds comes back
// from a confirmation token and from an audit record exactly.
func FuzzNamesRoundTripTokensAndAudit(f *testing.F) {
	for _, s := range []string{"", "k", "conf:\xff", "conf:\xEF\xBF\xBD", "\x00\x01\xfe", `<script>alert(1)</script>`,
		`{"b64":"eA=="}`, "ünï:cødé", "\xed\xa0\x80", "a\"b\\c\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		pv := Preview{Kind: "remove-leaderboard-entry", Request: Request{Conn: "main", DB: 14, Key: name, Args: map[string]string{"member": name}},
			Fingerprints: []string{"sha256/2:00"}, Made: time.UnixMilli(1_700_000_000_000), Nonce: "n"}
		back, err := ParseToken(pv.Token())
		if err != nil {
			t.Fatal(err)
		}
		if back.Request.Key != name || back.Request.Args["member"] != name {
			t.Fatalf("token: %q came back as %q / %q", name, back.Request.Key, back.Request.Args["member"])
		}

		rec := Record{ID: "1-1", Phase: PhaseIntent, Keys: []string{name, name + "2"}, Args: map[string]string{"member": name},
			Targets: []Target{{Key: name, Member: &MemberState{Name: name, Present: true, Score: "1"}}}}
		kv := rec.fields()
		values := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			values[kv[i].(string)] = kv[i+1] // a stream stores field values as bytes
		}
		got := parseRecord(redis.XMessage{ID: "1-1", Values: values})
		if len(got.Keys) != 2 || got.Keys[0] != name || got.Keys[1] != name+"2" || got.Args["member"] != name ||
			len(got.Targets) != 1 || got.Targets[0].Key != name || got.Targets[0].Member.Name != name {
			t.Fatalf("audit: %q came back as %+v", name, got)
		}
	})
}
