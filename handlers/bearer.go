package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// Tokens is what handlers need of the API token store (people.TokenStore).
type Tokens interface {
	Create(ctx context.Context, owner people.User, name string, level action.Level, expires time.Time) (string, people.Token, error)
	Resolve(ctx context.Context, secret string) (people.Token, error)
	List(ctx context.Context, owner string) ([]people.Token, error)
	Revoke(ctx context.Context, owner, name string) error
	// RevokeOwner revokes every token of owner: how many.
	RevokeOwner(ctx context.Context, owner string) (int, error)
}

// tokenTimeout bounds a token's lookup (and the lock-out check before it).
const tokenTimeout = 2 * time.Second

// bearerToken is the request's Authorization: Bearer credential. Only the
// header counts: a token is never read from a query string or a form.
// A bearer that is not a Keydeck token, arriving through a trusted proxy,
// is the proxy's business and is left alone.
func (a *App) bearerToken(c echo.Context) (string, bool) {
	h := c.Request().Header.Values(echo.HeaderAuthorization)
	if len(h) == 0 {
		return "", false
	}
	scheme, cred, _ := strings.Cut(strings.TrimSpace(h[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	cred = strings.TrimSpace(cred)
	if !strings.HasPrefix(cred, people.TokenPrefix) && a.fromTrustedProxy(c) {
		return "", false
	}
	if len(h) > 1 {
		return "", true // which one is meant is not ours to guess: refused
	}
	return cred, true
}

// tokenIdentity is who a token acts as: its owner at the token's level
// (capped by the owner's present one); an error when it is unknown,
// expired or revoked, or its owner is not (or not as the token was made
// for) in this replica's users file.
func (a *App) tokenIdentity(ctx context.Context, secret string) (people.Identity, error) {
	if a.auth.Tokens == nil {
		return people.Identity{}, people.ErrTokenUnknown
	}
	tok, err := a.auth.Tokens.Resolve(ctx, secret)
	if err != nil {
		return people.Identity{}, err
	}
	id, ok := tok.Identity(a.auth.Users)
	if !ok {
		// Refused, never deleted here: this replica's users file may be
		// behind another's (or cut off for one reload). Tokens end with
		// their account once it has stayed gone (people.Users.OnRemoved);
		// a token made for another password stays unusable by its binding.
		if _, known := a.auth.Users.Lookup(tok.Owner); !known {
			return people.Identity{}, fmt.Errorf("%w (its owner %s is not in this replica's users file)", people.ErrTokenUnknown, tok.Owner)
		}
		return people.Identity{}, fmt.Errorf("%w (%s; its owner is %s)", people.ErrTokenUnknown, tok.Dead(a.auth.Users), tok.Owner)
	}
	return id, nil
}

// bearerIdentity identifies a bearer request. Guesses count against the
// client address like failed sign-ins (people.TokenGuesses), and are
// counted before the lookup (people.Limiter.ReserveGuess): a locked-out
// address, or one with as many lookups in flight as it has guesses left,
// is refused before its token is looked up, so parallel guesses cannot
// all pass.
func (a *App) bearerIdentity(c echo.Context, secret string) (people.Identity, *tokenProblem) {
	ip := a.clientAddr(c)
	if p := a.reserveGuess(c.Request().Context(), ip); p != nil {
		return people.Identity{}, p
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), tokenTimeout)
	defer cancel()
	// Released after the failure is counted: the guess is counted throughout.
	defer a.auth.Limiter.ReleaseGuess(context.WithoutCancel(ctx), ip)
	id, err := a.tokenIdentity(ctx, secret)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, people.ErrTokenUnknown) {
		a.log.Warn("API token not checked: the token store (the audit Redis) cannot be read", "remote", ip, "err", err)
		return people.Identity{}, &tokenProblem{Status: http.StatusServiceUnavailable, Title: "Token store unavailable",
			Detail: "The API token could not be checked: the audit Redis, where tokens are kept, cannot be reached. Try again in a moment."}
	}
	v := a.auth.Limiter.Attempt(ctx, people.TokenGuesses, ip)
	a.log.Warn("API token refused", "remote", ip, "reason", err.Error())
	if v.Wait > 0 {
		return people.Identity{}, tooManyGuesses(v.Wait)
	}
	detail := "The bearer token is not a valid Keydeck API token: unknown, expired or revoked. Create one on " + route.AccountTokens + "."
	if a.auth.Tokens == nil {
		detail = "This console issues no API tokens: it has no users file (tokens belong to accounts in it)."
	}
	return people.Identity{}, &tokenProblem{Status: http.StatusUnauthorized, Title: "Invalid API token", Detail: detail,
		header: map[string]string{"WWW-Authenticate": `Bearer error="invalid_token"`}}
}

// flightWait bounds how long a bearer request waits for a place among
// its address's token lookups in flight (people.Limiter.ReserveGuess),
// polled every flightPoll: those are not failures, a valid token used by
// parallel requests waits rather than being refused. It stays under
// tokenTimeout, which the lookup after it gets afresh.
const (
	flightWait = time.Second
	flightPoll = 20 * time.Millisecond
)

// reserveGuess reserves a token lookup from ip, waiting up to flightWait
// while it is refused only for the lookups in flight; nil when reserved.
func (a *App) reserveGuess(parent context.Context, ip string) *tokenProblem {
	ctx, cancel := context.WithTimeout(parent, flightWait)
	defer cancel()
	for {
		rctx, rcancel := context.WithTimeout(parent, tokenTimeout)
		wait, busy := a.auth.Limiter.ReserveGuess(rctx, ip)
		rcancel()
		if wait <= 0 {
			return nil
		}
		if !busy {
			return tooManyGuesses(wait)
		}
		t := time.NewTimer(flightPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return tooManyInFlight(wait)
		case <-t.C:
		}
	}
}

func tooManyInFlight(wait time.Duration) *tokenProblem {
	secs := int(math.Ceil(wait.Seconds()))
	return &tokenProblem{Status: http.StatusTooManyRequests, Title: "Too many token lookups at once",
		Detail: fmt.Sprintf("This address has as many API token lookups in flight as it has attempts left; try again in %d s.", secs),
		header: map[string]string{"Retry-After": fmt.Sprint(secs)}}
}

func tooManyGuesses(wait time.Duration) *tokenProblem {
	secs := int(math.Ceil(wait.Seconds()))
	return &tokenProblem{Status: http.StatusTooManyRequests, Title: "Too many failed token attempts",
		Detail: fmt.Sprintf("This address sent too many unknown API tokens; try again in %d s (an admin may clear the lock-out on /account).", secs),
		header: map[string]string{"Retry-After": fmt.Sprint(secs)}}
}

// tokenProblem is an RFC 9457 problem: the answer to a refused bearer request,
// as application/problem+json to API paths and JSON clients.
type tokenProblem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	header map[string]string
}

// refuseBearer answers a refused bearer request: problem+json for /api/ paths
// and JSON clients, the error page otherwise.
func (a *App) refuseBearer(c echo.Context, p *tokenProblem) error {
	for k, v := range p.header {
		c.Response().Header().Set(k, v)
	}
	req := c.Request()
	if !strings.HasPrefix(req.URL.Path, "/api/") && !wantsJSON(req) {
		return echo.NewHTTPError(p.Status, p.Detail)
	}
	if p.Type == "" {
		p.Type = "about:blank"
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
	return c.Blob(p.Status, "application/problem+json", b)
}
