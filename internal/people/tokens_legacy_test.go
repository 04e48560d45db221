package people

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/action"
)

// writeLegacyToken stores a token as Keydeck wrote them before tokens
// were bound to their owner's account: no binding field.
func writeLegacyToken(t *testing.T, s *TokenStore, owner, name string, level action.Level) string {
	t.Helper()
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b)
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	d := digest(secret)
	ctx := context.Background()
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if err := s.client.HSet(ctx, s.tokenKey(d), "name", name, "owner", owner, "level", level.String(),
		"created", now, "expires", "0", "last_used", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.client.HSet(ctx, s.ownerKey(owner), name, d).Err(); err != nil {
		t.Fatal(err)
	}
	return secret
}

// A token minted before owner binding (no binding) is dead: nothing tells
// which password it was made under, so accepting it (or binding it to the
// present password) would bring back a leaked token that a password change
// ended. It is refused, listed with why, kept (never deleted nor bound by a
// lookup), and keeps its name until revoked.
func TestLegacyTokenIsDeadAndKept(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newTokenStore(t)
	ali := alice.WithPassword([]byte("hash-1"))
	users := NewUsers(ali)
	secret := writeLegacyToken(t, s, "alice", "old-ci", action.Viewer)
	tok, err := s.Resolve(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if why := tok.Dead(users); !strings.Contains(why, "made before tokens were bound") {
		t.Fatalf("a legacy token: dead %q", why)
	}
	if id, ok := tok.Identity(users); ok {
		t.Fatalf("a legacy token was accepted as %+v", id)
	}
	if s.client.HExists(ctx, s.tokenKey(digest(secret)), "binding").Val() {
		t.Fatal("a lookup bound the legacy token")
	}
	if _, _, err := s.Create(ctx, ali, "old-ci", action.Viewer, time.Time{}); !errors.Is(err, ErrTokenExistsDead) {
		t.Fatalf("a new token named as the legacy one: %v, want ErrTokenExistsDead", err)
	}
	if n := s.client.Exists(ctx, s.tokenKey(digest(secret))).Val(); n != 1 {
		t.Fatal("the legacy token was deleted")
	}
	if err := s.Revoke(ctx, "alice", "old-ci"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Create(ctx, ali, "old-ci", action.Viewer, time.Time{}); err != nil {
		t.Fatalf("the name once the legacy token is revoked: %v", err)
	}
}

// Tokens whose account is gone or was changed (a new password) are dead:
// the list says why, and they do not count toward MaxTokensPerOwner; each
// keeps its name until it is revoked (this replica's users file may be
// behind another's, where the token is live: it is never deleted unasked).
func TestDeadTokensAreMarkedAndFreeTheirNames(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newTokenStore(t)
	old := alice.WithPassword([]byte("hash-1"))
	for i := range MaxTokensPerOwner {
		if _, _, err := s.Create(ctx, old, "t"+strconv.Itoa(i), action.Viewer, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	renewed := alice.WithPassword([]byte("hash-2"))
	users := NewUsers(renewed)
	list, err := s.List(ctx, "alice")
	if err != nil || len(list) != MaxTokensPerOwner {
		t.Fatalf("list: %d, %v", len(list), err)
	}
	for _, tok := range list {
		if why := tok.Dead(users); why != "no longer valid: password changed" {
			t.Fatalf("token %s after a new password: dead %q", tok.Name, why)
		}
	}
	if why := list[0].Dead(NewUsers()); why != "no longer valid: its owner is not in the users file" {
		t.Fatalf("token of an owner gone: dead %q", why)
	}
	if _, _, err := s.Create(ctx, renewed, "t0", action.Viewer, time.Time{}); !errors.Is(err, ErrTokenExistsDead) {
		t.Fatalf("a new token named as a dead one: %v, want ErrTokenExistsDead", err)
	}
	if d := s.client.HGet(ctx, s.ownerKey("alice"), "t0").Val(); d == "" || s.client.Exists(ctx, s.tokenKey(d)).Val() != 1 {
		t.Fatal("creating a token deleted a dead one of its name")
	}
	if err := s.Revoke(ctx, "alice", "t0"); err != nil {
		t.Fatal(err)
	}
	secret, _, err := s.Create(ctx, renewed, "t0", action.Viewer, time.Time{})
	if err != nil {
		t.Fatalf("a new token named as a revoked dead one, with %d dead tokens: %v", MaxTokensPerOwner-1, err)
	}
	tok, err := s.Resolve(ctx, secret)
	if _, ok := tok.Identity(users); err != nil || !ok {
		t.Fatalf("the replacing token: %v %v", err, ok)
	}
	list, _ = s.List(ctx, "alice")
	if len(list) != MaxTokensPerOwner {
		t.Fatalf("after replacing a dead token: %d tokens listed, want %d (the dead t0 gone)", len(list), MaxTokensPerOwner)
	}
	if _, _, err := s.Create(ctx, renewed, "t0", action.Viewer, time.Time{}); !errors.Is(err, ErrTokenExists) {
		t.Fatalf("a live token's name again: %v, want ErrTokenExists", err)
	}
	for i := 1; i < MaxTokensPerOwner; i++ {
		if _, _, err := s.Create(ctx, renewed, "n"+strconv.Itoa(i), action.Viewer, time.Time{}); err != nil {
			t.Fatalf("live token %d of %d: %v", i+1, MaxTokensPerOwner, err)
		}
	}
	if _, _, err := s.Create(ctx, renewed, "one-more", action.Viewer, time.Time{}); !errors.Is(err, ErrTokensFull) {
		t.Fatalf("past the live limit: %v, want ErrTokensFull", err)
	}
}
