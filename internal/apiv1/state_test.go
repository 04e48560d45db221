package apiv1

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/decode"
)

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"RefillPerS": "refill_per_s", "TTL": "ttl", "LastRefill": "last_refill", "InWindow": "in_window", "ToFull": "to_full", "HTTPCode": "http_code", "A": "a"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestStateOfFollowsTheConventions(t *testing.T) {
	type inner struct{ Holder string }
	st := struct {
		Tokens     float64
		ToFull     time.Duration
		LastRefill time.Time
		Zero       time.Time
		Key        string
		Bad        float64
		Inner      inner
		Members    []string
		hidden     int
	}{Tokens: 2.5, ToFull: 1500 * time.Millisecond, LastRefill: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), Key: "k\xff", Bad: math.Inf(1), Inner: inner{"h"}, Members: []string{"a"}}
	b, err := json.Marshal(StateOf(&st))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"inner":{"holder":"h"},"key":{"b64":"a/8="},"last_refill":"2026-01-02T02:04:05Z","members":["a"],"to_full_ms":1500,"tokens":2.5}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if StateOf(nil) != nil || StateOf((*inner)(nil)) != nil {
		t.Error("a nil state is not nil")
	}
}

// The top-level answers over the ban lists are null when a list that
// could change them was not read, never false.
func TestBanCheckOfUnreadIsNotFalse(t *testing.T) {
	ban := bans.List{ID: "b", Bans: true}
	filter := bans.List{ID: "f"}
	read := func(l bans.List, v bans.Verdict) bans.ListRead {
		ch := bans.Check{Verdict: v, BloomHit: v == bans.Listed || v == bans.FalsePositive, InSet: v == bans.Listed || v == bans.Missed}
		return bans.ListRead{List: l, Check: &ch}
	}
	unread := bans.ListRead{List: ban, CheckErr: errors.New("NOPERM")}
	other := bans.List{ID: "b2", Bans: true}
	str := func(b *bool) string {
		if b == nil {
			return "null"
		}
		if *b {
			return "true"
		}
		return "false"
	}
	for _, tc := range []struct {
		name   string
		reads  []bans.ListRead
		banned string
		unread int
	}{
		{"listed", []bans.ListRead{read(ban, bans.Listed)}, "true", 0},
		{"not listed", []bans.ListRead{read(ban, bans.NotListed)}, "false", 0},
		{"missed is not banned", []bans.ListRead{read(ban, bans.Missed)}, "false", 0},
		{"unread", []bans.ListRead{unread}, "null", 1},
		{"unread and listed elsewhere", []bans.ListRead{unread, read(other, bans.Listed)}, "true", 1},
		{"a filter does not ban", []bans.ListRead{read(filter, bans.Listed), read(ban, bans.NotListed)}, "false", 0},
		{"sensitive", []bans.ListRead{{List: ban, Sensitive: true}}, "null", 1},
		{"no ban list", []bans.ListRead{read(filter, bans.Listed)}, "null", 1},
	} {
		got := BanCheckOf("c", "n", tc.reads, func(error) string { return "refused" })
		if str(got.Banned) != tc.banned || len(got.Unread) != tc.unread {
			t.Errorf("%s: banned %s, %d unread; want %s, %d", tc.name, str(got.Banned), len(got.Unread), tc.banned, tc.unread)
		}
	}
}

// Every role with a reader has a typed state in the contract: a role's
// Decoded is its own variant (discriminated by role) whose state has the
// role's fields, so a token bucket's state conforms and a lock's state
// under the role token-bucket does not; a withheld key of any role
// conforms without a state.
func TestDecodedStateIsTypedPerRole(t *testing.T) {
	for _, r := range decode.Roles() {
		if _, ok := stateTypes[r]; !ok {
			t.Errorf("role %s has a reader but no state type in the contract (registerState in internal/apiv1/state_%s.go)", r, strings.ReplaceAll(string(r), "-", ""))
		}
	}
	tb := &decode.TokenBucket{Tokens: 2, Capacity: 10, RefillPerS: 1, ToFull: 8 * time.Second, LastRefill: t0}
	good := Key{Violations: []string{}, Actions: []KeyAction{}, Value: Value{Elements: []Element{}}, Decoded: &Decoded{Role: "token-bucket", State: StateOf(tb)}}
	conforms(t, good)
	bad := good
	bad.Decoded = &Decoded{Role: "token-bucket", State: StateOf(&decode.Lock{Holder: "h", TTL: time.Second})}
	if len(schemaErrors(t, bad)) == 0 {
		t.Errorf("a lock's state passes as a token bucket's: %s", jsonOf(t, bad))
	}
	for _, role := range []string{"token-bucket", "secret"} {
		w := good
		w.Decoded = &Decoded{Role: role, Withheld: true}
		conforms(t, w)
	}
}
