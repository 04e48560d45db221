package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
)

// heldTokens holds every lookup until released, counting those that
// reached it: parallel guesses are all in flight at once.
type heldTokens struct {
	handlers.Tokens
	entered atomic.Int32
	release chan struct{}
}

func (h *heldTokens) Resolve(ctx context.Context, secret string) (people.Token, error) {
	h.entered.Add(1)
	<-h.release
	return h.Tokens.Resolve(ctx, secret)
}

// Parallel wrong guesses are counted before their lookup: of many sent at
// once from one address, no more reach the token store than the limit
// allows (5 a window, as failed sign-ins), the others are refused 429
// without a lookup — a check made before any of them failed let them all
// through.
func TestParallelTokenGuessesAreLimitedBeforeTheLookup(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	held := &heldTokens{Tokens: people.NewTokenStore(rs.Client(15)), release: make(chan struct{})}
	f := newAuthFixture(t, rs, func(a *handlers.Auth) { a.Tokens = held })
	const n = 12
	var returned atomic.Int32
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			guess := people.TokenPrefix + strings.Repeat(string(rune('A'+i)), 43)
			codes[i], _, _ = bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", guess, nil)
			returned.Add(1)
		}()
	}
	redistest.Eventually(t, 30*time.Second, "every guess looked up or refused", func() bool {
		return held.entered.Load()+returned.Load() == n
	})
	close(held.release)
	wg.Wait()
	looked, refused := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusUnauthorized:
			looked++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Errorf("a guess answered %d", c)
		}
	}
	if int(held.entered.Load()) != looked || looked > people.DefaultLoginPolicy.PerPair || refused != n-looked {
		t.Fatalf("%d parallel guesses: %d looked up (%d answered 401), %d refused 429; want at most %d looked up",
			n, held.entered.Load(), looked, refused, people.DefaultLoginPolicy.PerPair)
	}
}

// Lookups in flight hold places but are not failures: a valid token used
// by many requests at once from one address (a CI fan-out, a NAT) waits
// for a place rather than being refused as a guesser.
func TestParallelValidTokenRequestsAreNotRefused(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	tok := mintToken(t, newBrowserAs(t, f, "ada"), "fan-out", "viewer", "30d")
	const n = 12
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", tok, nil)
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d of %d parallel ones with a valid token: %d, want 200", i, n, c)
		}
	}
}
