package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// notByToken keeps API tokens off the account pages and sign-out: a
// token never manages accounts or tokens (a leaked one could otherwise
// mint more), and a bearer request sets no cookie.
func notByToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if identity(c).Via == "token" {
			return echo.NewHTTPError(http.StatusForbidden, "An API token cannot manage accounts, sessions or tokens: sign in to do that.")
		}
		return next(c)
	}
}

// tokenOwner is the users-file account the identity holds tokens as, or
// why it holds none.
func (a *App) tokenOwner(id people.Identity) (people.User, string) {
	switch {
	case a.auth.Open:
		return people.User{}, "This console runs in open mode, without a users file: nobody signs in, so a token would have no owner whose role bounds it (and everyone reaching this loopback address is admin already). Start Keydeck with --users FILE to use API tokens."
	case a.auth.Users == nil:
		return people.User{}, "This console has no users file: people are named by the trusted proxy only, and a token must belong to an account in the users file, whose role bounds it."
	case a.auth.Tokens == nil:
		return people.User{}, "API tokens are not configured on this console."
	case id.Unmatched:
		return people.User{}, "Your proxy identity has no account in the users file, and tokens belong to accounts in it."
	}
	u, ok := a.auth.Users.Lookup(id.User)
	if !ok || !id.Owns(u.Name) {
		return people.User{}, "You have no account in the users file, and tokens belong to accounts in it."
	}
	// A token's role is at most the role the person holds now: behind a
	// proxy that names the role, that may be below the users file's.
	u.Level = min(u.Level, id.Level)
	return u, ""
}

func (a *App) tokensPage(c echo.Context) error {
	return a.renderTokens(c, http.StatusOK, views.TokensVM{Expires: "30d"})
}

// renderTokens fills in the owner's roles and tokens and renders the page.
// Dead tokens (their owner gone, or with another password since) are
// listed, marked with why, not purged: this replica's users file may be
// behind another's, and a revoke of one removes it for good.
func (a *App) renderTokens(c echo.Context, status int, vm views.TokensVM) error {
	u, why := a.tokenOwner(identity(c))
	vm.Unavailable = why
	if why == "" {
		vm.Owner = u.Name
		for l := action.Viewer; l <= u.Level; l++ {
			vm.Roles = append(vm.Roles, l.String())
		}
		if vm.Role == "" {
			vm.Role = action.Viewer.String()
		}
		ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
		list, err := a.auth.Tokens.List(ctx, u.Name)
		cancel()
		if err != nil {
			vm.ListError = "Your tokens cannot be listed: the audit Redis, where they are kept, cannot be read."
		}
		for _, t := range list {
			vm.Tokens = append(vm.Tokens, views.TokenRow{Name: t.Name, Role: t.Level.String(), Created: format.Time(t.Created),
				Expires: expiryText(t.Expires), LastUsed: lastUseText(t.LastUsed), Dead: t.Dead(a.auth.Users)})
		}
	}
	if id := identity(c); id.Level >= action.Admin && a.auth.Users != nil && a.auth.Tokens != nil {
		vm.Admin = true
		ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
		for _, owner := range a.auth.Users.Names() {
			list, err := a.auth.Tokens.List(ctx, owner)
			if err != nil {
				vm.EveryoneError = "Not every token could be listed: the audit Redis, where they are kept, cannot be read."
				break
			}
			for _, t := range list {
				vm.Everyone = append(vm.Everyone, views.TokenRow{Name: t.Name, Owner: t.Owner, Role: t.Level.String(), Created: format.Time(t.Created),
					Expires: expiryText(t.Expires), LastUsed: lastUseText(t.LastUsed), Dead: t.Dead(a.auth.Users)})
			}
		}
		cancel()
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, status, vm, views.TokensPage(a.page(c, "API tokens", ""), vm))
}

// Kinds of the token store's writes in the audit log (action.OwnWrite).
const (
	kindRevokeToken  = "revoke-token"
	kindRevokeTokens = "revoke-tokens"
)

// OwnAudit records writes of Keydeck's own (API token revocations) in the
// audit log, as action.Runner.RecordOwn does.
type OwnAudit interface {
	RecordOwn(ctx context.Context, actor action.Actor, w action.OwnWrite, do func(context.Context) (string, error)) (string, error)
}

// recordOwn runs do, a write to the token store, recorded in the audit
// log when it has one that records Keydeck's own writes: not run when its
// intent cannot be recorded (action.ErrAuditUnavailable).
func (a *App) recordOwn(c echo.Context, w action.OwnWrite, do func(context.Context) (string, error)) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	if a.own == nil {
		_, err := do(ctx)
		return err
	}
	warning, err := a.own.RecordOwn(ctx, actor(c), w, do)
	if warning != "" {
		a.log.Warn("audit log: "+w.Kind+" done, its outcome not recorded", "warning", warning)
	}
	return err
}

func expiryText(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return format.Time(t)
}

func lastUseText(t time.Time) string {
	if t.IsZero() {
		return "never used"
	}
	return format.Time(t)
}

// createToken checks the form, asks for confirmation, then creates the
// token and shows it this once.
func (a *App) createToken(c echo.Context) error {
	id := identity(c)
	u, why := a.tokenOwner(id)
	if why != "" {
		return a.renderTokens(c, http.StatusForbidden, views.TokensVM{})
	}
	vm := views.TokensVM{Name: c.FormValue("name"), Role: c.FormValue("role"), Expires: c.FormValue("expires")}
	level, expires, ok := a.checkTokenForm(u, &vm)
	if !ok {
		return a.renderTokens(c, http.StatusBadRequest, vm)
	}
	if c.FormValue("confirm") != "yes" {
		vm.ConfirmCreate, vm.ExpiresText = true, expiryText(expires)
		return a.renderTokens(c, http.StatusOK, vm)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	secret, tok, err := a.auth.Tokens.Create(ctx, u, vm.Name, level, expires)
	cancel()
	switch {
	case errors.Is(err, people.ErrTokenExists):
		vm.NameError = "You already have a token called that: pick another name, or revoke that one first."
		return a.renderTokens(c, http.StatusConflict, vm)
	case errors.Is(err, people.ErrTokenExistsDead):
		vm.NameError = "You have a token called that which no longer works: revoke it first, or pick another name."
		return a.renderTokens(c, http.StatusConflict, vm)
	case errors.Is(err, people.ErrTokensFull):
		vm.Error = "You hold the most tokens one may (" + format.Count(int64(people.MaxTokensPerOwner)) + "): revoke one first."
		return a.renderTokens(c, http.StatusConflict, vm)
	case err != nil:
		a.log.Error("API token not created: the token store cannot be written", "user", u.Name, "token", vm.Name, "err", err)
		vm.Error = "No token was created: the audit Redis, where tokens are kept, cannot be reached. Try again in a moment."
		return a.renderTokens(c, http.StatusServiceUnavailable, vm)
	}
	a.log.Warn("API token created", "user", u.Name, "token", tok.Name, "role", tok.Level.String(), "expires", expiryText(tok.Expires), "remote", a.clientAddr(c))
	return a.renderTokens(c, http.StatusOK, views.TokensVM{Expires: "30d",
		Created: &views.CreatedToken{Name: tok.Name, Role: tok.Level.String(), Expires: expiryText(tok.Expires), Secret: secret}})
}

// checkTokenForm validates the form's fields, noting each one's error.
func (a *App) checkTokenForm(u people.User, vm *views.TokensVM) (action.Level, time.Time, bool) {
	if err := people.ValidTokenName(vm.Name); err != nil {
		vm.NameError = "The name is not valid: " + err.Error() + "."
	}
	level, err := action.ParseLevel(vm.Role)
	switch {
	case err != nil:
		vm.RoleError = "Choose viewer, support or admin."
	case !u.Level.Allows(level):
		vm.RoleError = "Your role is " + u.Level.String() + ": a token's role is at most that."
	}
	expires, err := people.ParseTokenExpiry(vm.Expires, a.now())
	if err != nil {
		vm.ExpiresError = "The expiry is not valid: " + err.Error() + "."
	}
	return level, expires, vm.NameError == "" && vm.RoleError == "" && vm.ExpiresError == ""
}

// revokeToken ends one of the person's tokens, or for an admin anyone's
// (the form's owner), after a confirmation; logged with who did it.
func (a *App) revokeToken(c echo.Context) error {
	id := identity(c)
	u, why := a.tokenOwner(id)
	if a.auth.Tokens == nil {
		// No token store (open mode, a proxy without a users file): no
		// token to revoke, whoever asks; the page says why.
		return a.renderTokens(c, http.StatusNotFound, views.TokensVM{})
	}
	if why != "" && id.Level < action.Admin {
		return a.renderTokens(c, http.StatusForbidden, views.TokensVM{})
	}
	name := c.FormValue("name")
	owner := c.FormValue("owner")
	if owner == "" {
		owner = u.Name
	}
	other := owner != u.Name
	if other && id.Level < action.Admin {
		return a.renderTokens(c, http.StatusForbidden, views.TokensVM{Expires: "30d", Error: "Only an admin may revoke another person's token."})
	}
	if owner == "" {
		return a.renderTokens(c, http.StatusBadRequest, views.TokensVM{Expires: "30d", Error: "Name the token's owner."})
	}
	if c.FormValue("confirm") != "yes" {
		vm := views.TokensVM{Expires: "30d", ConfirmRevoke: name}
		if other {
			vm.ConfirmRevokeOwner = owner
		}
		return a.renderTokens(c, http.StatusOK, vm)
	}
	whose := "You have no token"
	if other {
		whose = views.EscapeName(owner) + " has no token"
	}
	// A name no token can have, or one the owner has not, is refused
	// before anything is recorded: an audit record per request would let
	// anyone signed in flood the audit log (and push out what undo needs).
	if !a.ownsToken(c.Request().Context(), owner, name) {
		return a.renderTokens(c, http.StatusNotFound, views.TokensVM{Expires: "30d", Error: whose + " called " + views.EscapeName(name) + " (it may have expired, or been revoked already)."})
	}
	err := a.recordOwn(c, action.OwnWrite{Kind: kindRevokeToken, Args: map[string]string{"owner": owner, "name": name},
		Summary: fmt.Sprintf("revoke API token %q of %s", name, owner)},
		func(ctx context.Context) (string, error) { return "", a.auth.Tokens.Revoke(ctx, owner, name) })
	switch {
	case errors.Is(err, people.ErrTokenUnknown):
		return a.renderTokens(c, http.StatusNotFound, views.TokensVM{Expires: "30d", Error: whose + " called " + views.EscapeName(name) + " (it may have expired, or been revoked already)."})
	case errors.Is(err, action.ErrAuditUnavailable):
		a.log.Error("API token not revoked: the audit log cannot record it", "user", owner, "token", name, "by", id.ActorName(), "err", err)
		return a.renderTokens(c, http.StatusServiceUnavailable, views.TokensVM{Expires: "30d",
			Error: "The token was not revoked: the audit log, on the audit Redis, cannot record it. Try again in a moment."})
	case err != nil:
		a.log.Error("API token not revoked: the token store cannot be written", "user", owner, "token", name, "by", id.ActorName(), "err", err)
		return a.renderTokens(c, http.StatusServiceUnavailable, views.TokensVM{Expires: "30d",
			Error: "The token may still work: the audit Redis, where tokens are kept, cannot be reached. Try again in a moment."})
	}
	a.log.Warn("API token revoked", "user", owner, "token", name, "by", id.ActorName(), "remote", a.clientAddr(c))
	return a.renderTokens(c, http.StatusOK, views.TokensVM{Expires: "30d", Done: "The token " + views.EscapeName(name) + " is revoked: no replica accepts it any more."})
}

// ownsToken reports whether owner holds a token called name, or the token
// store could not say (then the revoke itself answers). A name no token
// may have, or an owner no users file could name, is not looked up.
func (a *App) ownsToken(ctx context.Context, owner, name string) bool {
	if people.ValidTokenName(name) != nil || len(owner) > maxOwnerName {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	list, err := a.auth.Tokens.List(ctx, owner)
	if err != nil {
		return true
	}
	for _, t := range list {
		if t.Name == name {
			return true
		}
	}
	return false
}

// maxOwnerName bounds a token owner's name in a revoke form: a users
// file's names are far shorter.
const maxOwnerName = 256
