package people

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strconv"
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

// A token minted before owner binding (no binding) is accepted while its
// owner is in the users file with a role at least the token's, and is
// bound to that account at its first use, once: a later use with another
// password's account (another replica, the password changed) is refused.
// One whose role is above its owner's is refused and left as it is.
func TestLegacyTokenIsBoundAtFirstUse(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newTokenStore(t)
	ali := alice.WithPassword([]byte("hash-1"))
	users := NewUsers(ali)
	secret := writeLegacyToken(t, s, "alice", "old-ci", action.Viewer)
	tok, err := s.Resolve(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if why := tok.Dead(users); why != "" {
		t.Fatalf("a legacy token of a present owner is listed dead: %q", why)
	}
	tok, err = s.BindLegacy(ctx, tok, users)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := tok.Identity(users)
	if !ok || id.User != "alice" || id.Level != action.Viewer || id.Token != "old-ci" {
		t.Fatalf("legacy token: identity %+v %v, want alice at viewer", id, ok)
	}
	if got := s.client.HGet(ctx, s.tokenKey(digest(secret)), "binding").Val(); got != ali.tokenBinding() {
		t.Fatalf("binding stored %q, want alice's %q", got, ali.tokenBinding())
	}
	// Bound once: another account's view does not rebind it.
	other := NewUsers(alice.WithPassword([]byte("hash-2")))
	tok2, _ := s.Resolve(ctx, secret)
	if tok2, err = s.BindLegacy(ctx, tok2, other); err != nil {
		t.Fatal(err)
	}
	if _, ok := tok2.Identity(other); ok {
		t.Fatal("a bound legacy token was accepted for another password")
	}
	if got := s.client.HGet(ctx, s.tokenKey(digest(secret)), "binding").Val(); got != ali.tokenBinding() {
		t.Fatalf("binding rewritten to %q", got)
	}
	// A role above its owner's: refused, not bound, not deleted.
	high := writeLegacyToken(t, s, "alice", "too-high", action.Admin)
	tok3, _ := s.Resolve(ctx, high)
	if tok3, err = s.BindLegacy(ctx, tok3, users); err != nil {
		t.Fatal(err)
	}
	if _, ok := tok3.Identity(users); ok {
		t.Fatal("a legacy admin token of a support owner was accepted")
	}
	if tok3.Dead(users) == "" {
		t.Fatal("a legacy token above its owner's role is not listed dead")
	}
	if n := s.client.Exists(ctx, s.tokenKey(digest(high))).Val(); n != 1 {
		t.Fatal("the refused legacy token was deleted")
	}
	// An owner gone: refused, unbound.
	gone := writeLegacyToken(t, s, "carol", "x", action.Viewer)
	tok4, _ := s.Resolve(ctx, gone)
	if tok4, err = s.BindLegacy(ctx, tok4, users); err != nil {
		t.Fatal(err)
	}
	if _, ok := tok4.Identity(users); ok || s.client.HExists(ctx, s.tokenKey(digest(gone)), "binding").Val() {
		t.Fatal("a legacy token of an owner not in the users file was accepted or bound")
	}
	// Revoked meanwhile: unknown.
	tok5, _ := s.Resolve(ctx, writeLegacyToken(t, s, "alice", "revoked", action.Viewer))
	if err := s.Revoke(ctx, "alice", "revoked"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BindLegacy(ctx, tok5, users); !errors.Is(err, ErrTokenUnknown) {
		t.Fatalf("binding a token revoked since its lookup: %v, want ErrTokenUnknown", err)
	}
}

// Tokens whose account is gone or was changed (a new password) are dead:
// the list says why, and they neither count toward MaxTokensPerOwner nor
// keep their name (a new token of that name replaces the dead one).
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
	secret, _, err := s.Create(ctx, renewed, "t0", action.Viewer, time.Time{})
	if err != nil {
		t.Fatalf("a new token named as a dead one, with %d dead tokens: %v", MaxTokensPerOwner, err)
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
