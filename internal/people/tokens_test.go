package people

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
)

var (
	alice = User{Name: "alice", Level: action.Support}
	bob   = User{Name: "bob", Level: action.Admin}
)

// newTokenStore is a store on a fresh server's database 15, on a fake
// clock standing at the wall clock's now (Redis expires keys by its own).
func newTokenStore(t *testing.T) (*TokenStore, *redistest.Server, *clock.Fake) {
	t.Helper()
	rs := redistest.Start(t)
	clk := clock.NewFake(time.Now())
	return NewTokenStore(rs.Client(15), WithClock(clk)), rs, clk
}

func TestTokenStoreCreateAndResolve(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newTokenStore(t)
	secret, tok, err := s.Create(ctx, alice, "ci-bot", action.Viewer, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "kdt_") || len(secret) < 4+43 {
		t.Fatalf("secret %q: want kdt_ and at least 32 random bytes", secret)
	}
	got, err := s.Resolve(ctx, secret)
	if err != nil || got.Name != "ci-bot" || got.Owner != "alice" || got.Level != action.Viewer || !got.Expires.IsZero() || !got.Created.Equal(tok.Created) {
		t.Fatalf("resolved %+v, %v; created %+v", got, err, tok)
	}
	// A second token is another secret.
	other, _, err := s.Create(ctx, alice, "deploy", action.Support, time.Time{})
	if err != nil || other == secret {
		t.Fatalf("second token %q, %v", other, err)
	}
	for _, bad := range []string{"", "kdt_", secret[:len(secret)-1], secret + "A", "Bearer " + secret, strings.ToUpper(secret),
		secret[:len(secret)-2] + "AA", "kdt_" + strings.Repeat("A", 43)} {
		if _, err := s.Resolve(ctx, bad); !errors.Is(err, ErrTokenUnknown) {
			t.Errorf("Resolve(%q) = %v, want ErrTokenUnknown", bad, err)
		}
	}
}

// The audit Redis holds the token's digest, never the token: every value
// of every key in every database is read and searched for it.
func TestTokenStoreKeepsOnlyTheDigest(t *testing.T) {
	ctx := context.Background()
	s, rs, _ := newTokenStore(t)
	secret, _, err := s.Create(ctx, alice, "ci-bot", action.Viewer, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, secret); err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(secret, TokenPrefix)
	sawDigest := false
	for db := range 16 {
		c := rs.Client(db)
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, "*", 100).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				text := k + "\x00" + dumpValue(t, c, k)
				if strings.Contains(text, body) {
					t.Fatalf("db %d key %q holds the token", db, k)
				}
				sawDigest = sawDigest || strings.Contains(text, digest(secret))
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	if !sawDigest {
		t.Fatal("the token's SHA-256 digest is stored nowhere: the test would not see a token either")
	}
}

// dumpValue is every byte of k's value, whatever its type.
func dumpValue(t *testing.T, c *redis.Client, k string) string {
	ctx := context.Background()
	var parts []string
	switch typ := c.Type(ctx, k).Val(); typ {
	case "string":
		parts = append(parts, c.Get(ctx, k).Val())
	case "hash":
		for f, v := range c.HGetAll(ctx, k).Val() {
			parts = append(parts, f, v)
		}
	case "set":
		parts = c.SMembers(ctx, k).Val()
	case "list":
		parts = c.LRange(ctx, k, 0, -1).Val()
	case "zset":
		parts = c.ZRange(ctx, k, 0, -1).Val()
	case "stream":
		for _, m := range c.XRange(ctx, k, "-", "+").Val() {
			for f, v := range m.Values {
				parts = append(parts, f, v.(string))
			}
		}
	default:
		t.Fatalf("key %q of type %s not read", k, typ)
	}
	return strings.Join(parts, "\x00")
}

func TestTokenStoreExpiry(t *testing.T) {
	ctx := context.Background()
	s, rs, clk := newTokenStore(t)
	secret, _, err := s.Create(ctx, alice, "ci-bot", action.Viewer, clk.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if ttl := rs.Client(15).PTTL(ctx, "keydeck:token:"+digest(secret)).Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("record's TTL %v, want the token's hour", ttl)
	}
	clk.Advance(time.Hour - time.Millisecond)
	if _, err := s.Resolve(ctx, secret); err != nil {
		t.Fatalf("a millisecond before its expiry: %v", err)
	}
	clk.Advance(time.Millisecond)
	if _, err := s.Resolve(ctx, secret); !errors.Is(err, ErrTokenUnknown) {
		t.Fatalf("at its expiry: %v, want ErrTokenUnknown", err)
	}
	if list, err := s.List(ctx, "alice"); err != nil || len(list) != 0 {
		t.Fatalf("expired token listed: %+v %v", list, err)
	}
	if _, _, err := s.Create(ctx, alice, "late", action.Viewer, clk.Now().Add(-time.Second)); err == nil {
		t.Fatal("a token expiring in the past was created")
	}
}

// A token revoked through one replica's store is refused by another's at
// once (each request is looked up in Redis; there is no cache).
func TestTokenRevocationSeenByAnotherReplica(t *testing.T) {
	ctx := context.Background()
	s1, rs, _ := newTokenStore(t)
	s2 := NewTokenStore(rs.Client(15))
	secret, _, err := s1.Create(ctx, alice, "ci-bot", action.Viewer, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Resolve(ctx, secret); err != nil {
		t.Fatalf("the other replica: %v", err)
	}
	if err := s1.Revoke(ctx, "alice", "ci-bot"); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	redistest.Eventually(t, time.Second, "the other replica refuses the revoked token", func() bool {
		_, err := s2.Resolve(ctx, secret)
		return errors.Is(err, ErrTokenUnknown)
	})
	t.Logf("refused by the other replica %v after the revocation", time.Since(revoked))
	if err := s1.Revoke(ctx, "alice", "ci-bot"); !errors.Is(err, ErrTokenUnknown) {
		t.Fatalf("revoking again: %v", err)
	}
	if list, _ := s2.List(ctx, "alice"); len(list) != 0 {
		t.Fatalf("revoked token listed: %+v", list)
	}
}

// A token's level is at most its owner's: when created, and when used
// after the owner was demoted; an owner gone from the users file takes
// their tokens along.
func TestTokenLevelIsCappedByItsOwner(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newTokenStore(t)
	if _, _, err := s.Create(ctx, alice, "too-high", action.Admin, time.Time{}); !errors.Is(err, ErrTokenLevel) {
		t.Fatalf("support creating an admin token: %v", err)
	}
	secret, _, err := s.Create(ctx, bob, "ops", action.Admin, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Resolve(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := tok.Identity(NewUsers(bob))
	if !ok || id.Level != action.Admin || id.Via != "token" || id.User != "bob" || id.Token != "ops" || id.ActorName() != "bob (token ops)" {
		t.Fatalf("identity %+v %v", id, ok)
	}
	if id, ok := tok.Identity(NewUsers(User{Name: "bob", Level: action.Viewer})); !ok || id.Level != action.Viewer {
		t.Fatalf("bob demoted to viewer: token acts as %+v %v", id, ok)
	}
	if _, ok := tok.Identity(NewUsers(alice)); ok {
		t.Fatal("bob removed from the users file: his token still acts")
	}
}

func TestTokenNamesPerOwner(t *testing.T) {
	ctx := context.Background()
	s, _, clk := newTokenStore(t)
	if _, _, err := s.Create(ctx, alice, "ci", action.Viewer, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Create(ctx, alice, "ci", action.Viewer, time.Time{}); !errors.Is(err, ErrTokenExists) {
		t.Fatalf("a second 'ci' of alice's: %v", err)
	}
	if _, _, err := s.Create(ctx, bob, "ci", action.Viewer, time.Time{}); err != nil {
		t.Fatalf("bob's own 'ci': %v", err)
	}
	for i := 1; i < MaxTokensPerOwner; i++ {
		clk.Advance(time.Millisecond)
		if _, _, err := s.Create(ctx, alice, "t"+strconv.Itoa(i), action.Viewer, time.Time{}); err != nil {
			t.Fatalf("token %d: %v", i+1, err)
		}
	}
	if _, _, err := s.Create(ctx, alice, "one-more", action.Viewer, time.Time{}); !errors.Is(err, ErrTokensFull) {
		t.Fatalf("token %d: %v", MaxTokensPerOwner+1, err)
	}
	list, err := s.List(ctx, "alice")
	if err != nil || len(list) != MaxTokensPerOwner || list[0].Name != "t49" || list[len(list)-1].Name != "ci" {
		t.Fatalf("alice's list: %d tokens (%v), first %+v", len(list), err, list[0])
	}
	if err := s.Revoke(ctx, "alice", "t3"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Create(ctx, alice, "one-more", action.Viewer, time.Time{}); err != nil {
		t.Fatalf("after a revocation: %v", err)
	}
	if err := s.Revoke(ctx, "bob", "t4"); !errors.Is(err, ErrTokenUnknown) {
		t.Fatalf("bob revoking alice's t4: %v", err)
	}
}

// A token's last use is written at most once a minute, not per request.
func TestTokenLastUseAtMostOnceAMinute(t *testing.T) {
	ctx := context.Background()
	s, rs, clk := newTokenStore(t)
	secret, _, err := s.Create(ctx, alice, "ci", action.Viewer, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	stored := func() string { return rs.Client(15).HGet(ctx, "keydeck:token:"+digest(secret), "last_used").Val() }
	if stored() != "0" {
		t.Fatalf("a new token's last use: %q", stored())
	}
	first := clk.Now()
	for range 5 {
		if _, err := s.Resolve(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	want := strconv.FormatInt(first.UnixMilli(), 10)
	clk.Advance(59 * time.Second)
	tok, _ := s.Resolve(ctx, secret)
	if stored() != want || !tok.LastUsed.Equal(time.UnixMilli(first.UnixMilli())) {
		t.Fatalf("after requests within a minute: stored %q (want %s), shown %v", stored(), want, tok.LastUsed)
	}
	clk.Advance(time.Second)
	s.Resolve(ctx, secret)
	if want := strconv.FormatInt(clk.Now().UnixMilli(), 10); stored() != want {
		t.Fatalf("a minute later: stored %q, want %s", stored(), want)
	}
}

func TestTokenNameAndExpiryRules(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{{"ci-bot", true}, {"x", true}, {strings.Repeat("é", 64), true}, {"nightly check", true},
		{"", false}, {strings.Repeat("a", 65), false}, {" ci", false}, {"ci ", false}, {"a\nb", false}, {"a\u200bb", false}, {"\xff", false}} {
		if err := ValidTokenName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidTokenName(%q) = %v", tt.name, err)
		}
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Time
		ok   bool
	}{{"never", time.Time{}, true}, {"1d", now.Add(24 * time.Hour), true}, {"90d", now.Add(90 * 24 * time.Hour), true},
		{"2027-01-31", time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), true}, {"2027-01-31T10:00:00Z", time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC), true},
		{"0d", time.Time{}, false}, {"-1d", time.Time{}, false}, {"3651d", time.Time{}, false}, {"2026-12-01", time.Time{}, false},
		{"2040-01-01", time.Time{}, false}, {"soon", time.Time{}, false}, {"", time.Time{}, false}} {
		got, err := ParseTokenExpiry(tt.in, now)
		if (err == nil) != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ParseTokenExpiry(%q) = %v, %v", tt.in, got, err)
		}
	}
}
