package handlers

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// accountPage shows who is signed in and how to end sessions: one's own
// everywhere, and for an admin any user's.
func (a *App) accountPage(c echo.Context) error {
	if a.auth.Users == nil {
		return echo.NewHTTPError(http.StatusNotFound, "Sign-in is not configured on this console.")
	}
	return a.renderAccount(c, http.StatusOK, views.AccountVM{})
}

func (a *App) renderAccount(c echo.Context, status int, vm views.AccountVM) error {
	id := identity(c)
	vm.User, vm.Role = id.User, id.Level.String()
	switch id.Via {
	case "session":
		vm.Via = "with a password"
		vm.Since = format.Time(id.Issued)
		vm.Expires = format.Time(id.Expires)
	case "proxy":
		vm.Via = "through the trusted proxy"
		if id.Unmatched {
			vm.Via += ", without an account in the users file"
		}
	}
	vm.Self = id.Via == "session"
	vm.Admin = id.Level >= action.Admin
	vm.Tokens = -1
	if vm.Self && a.auth.Tokens != nil {
		ctx, cancel := context.WithTimeout(c.Request().Context(), tokenTimeout)
		if list, err := a.auth.Tokens.List(ctx, id.User); err == nil {
			vm.Tokens = 0
			for _, t := range list {
				if t.Dead(a.auth.Users) == "" {
					vm.Tokens++
				} else {
					vm.DeadTokens++
				}
			}
		}
		cancel()
	}
	if vm.Admin {
		a.listLockouts(c, &vm)
	}
	return render(c, status, vm, views.AccountPage(a.page(c, "Your account", ""), vm))
}

// signOutEverywhere voids every session of a user issued until now, on
// every replica: a user may do it for themselves, an admin for any name.
// Like logout it fails closed: if the store cannot record it, nothing is
// claimed.
func (a *App) signOutEverywhere(c echo.Context) error {
	if a.auth.Users == nil {
		return echo.NewHTTPError(http.StatusNotFound, "Sign-in is not configured on this console.")
	}
	id := identity(c)
	target := strings.TrimSpace(c.FormValue("user"))
	if target == "" {
		if id.Via != "session" {
			return echo.NewHTTPError(http.StatusBadRequest, "Name the user whose sessions to end.")
		}
		target = id.User
	}
	if !id.Owns(target) && id.Level < action.Admin {
		if id.Unmatched && target == id.User {
			return echo.NewHTTPError(http.StatusForbidden, "Your proxy identity has no account in the users file, so it has no sessions here; only an admin may sign out the account "+target+".")
		}
		return echo.NewHTTPError(http.StatusForbidden, "Only an admin may sign out another user.")
	}
	if strings.ContainsAny(target, " \t\r\n") || len(target) > 64 {
		return a.renderAccount(c, http.StatusBadRequest, views.AccountVM{Target: target, Error: "A user name is 1–64 characters without spaces."})
	}
	at := a.now()
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	err := a.auth.Sessions.RevokeUser(ctx, target, at, max(a.auth.SessionTTL, people.MaxSessionTTL))
	cancel()
	if err != nil {
		a.log.Error("sign-out-everywhere failed: the session store cannot record it; the sessions stay valid", "user", target, "by", id.ActorName(), "err", err)
		return a.renderAccount(c, http.StatusServiceUnavailable, views.AccountVM{Target: target,
			Error: "Nothing was signed out: the session store (the audit Redis) cannot be reached. Try again in a moment."})
	}
	a.log.Warn("signed out everywhere", "user", target, "by", id.ActorName(), "remote", a.clientAddr(c))
	revoked := ""
	if c.FormValue("revoke_tokens") == "yes" && a.auth.Tokens != nil {
		n := 0
		err := a.recordOwn(c, action.OwnWrite{Kind: kindRevokeTokens, Args: map[string]string{"owner": target},
			Summary: "revoke every API token of " + target + " (sign out everywhere)"},
			func(ctx context.Context) (string, error) {
				var err error
				n, err = a.auth.Tokens.RevokeOwner(ctx, target)
				return fmt.Sprintf("revoked the %d API tokens of %s (sign out everywhere)", n, target), err
			})
		if err != nil {
			a.log.Error("sign-out-everywhere: the API tokens could not be revoked; they stay valid", "user", target, "by", id.ActorName(), "err", err)
			return a.renderAccount(c, http.StatusServiceUnavailable, views.AccountVM{Target: target,
				Error: "Every session of " + target + " has ended, but its API tokens could not be revoked: the token store (the audit Redis) cannot be reached. Try again in a moment."})
		}
		a.log.Warn("API tokens revoked with sign-out-everywhere", "user", target, "tokens", n, "by", id.ActorName(), "remote", a.clientAddr(c))
		revoked = fmt.Sprintf(" Its %d API tokens are revoked.", n)
	}
	if target == id.User && id.Via == "session" {
		a.clearSession(c)
		return c.Redirect(http.StatusSeeOther, route.Login)
	}
	msg := "Every session of " + target + " opened until " + format.Clock(at) + " has ended, on every replica." + revoked
	if _, known := a.auth.Users.Lookup(target); !known {
		msg += " (" + target + " is not in the users file.)"
	}
	return a.renderAccount(c, http.StatusOK, views.AccountVM{Done: msg})
}

// lockoutsShown is how many sign-in lock-outs the account page lists.
const lockoutsShown = 100

func (a *App) listLockouts(c echo.Context, vm *views.AccountVM) {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	list, total, err := a.auth.Limiter.Lockouts(ctx, lockoutsShown)
	cancel()
	if err != nil {
		vm.LockoutsError = "The audit Redis cannot be read: only the lock-outs this replica counted itself while it was unreachable are listed."
	}
	for _, l := range list {
		vm.Lockouts = append(vm.Lockouts, lockoutRow(l))
	}
	vm.LockoutsMore = max(0, total-len(list))
}

func lockoutRow(l people.Lockout) views.LockoutRow {
	return views.LockoutRow{Account: l.User, AllAccounts: l.User == "", Addr: l.Addr, Until: format.Time(l.Until),
		Ref: base64.RawURLEncoding.EncodeToString([]byte(l.Addr + "\x00" + l.User))}
}

// clearLockout ends a sign-in lock-out, after a confirmation showing which
// (an admin's; logged). The form carries the lock-out's account byte-exact,
// encoded, as the list showed it.
func (a *App) clearLockout(c echo.Context) error {
	if a.auth.Users == nil {
		return echo.NewHTTPError(http.StatusNotFound, "Sign-in is not configured on this console.")
	}
	id := identity(c)
	raw, err := base64.RawURLEncoding.DecodeString(c.FormValue("lockout"))
	addr, user, ok := strings.Cut(string(raw), "\x00")
	if err != nil || !ok || addr == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "Name the lock-out to clear from the list on this page.")
	}
	row := lockoutRow(people.Lockout{User: user, Addr: addr})
	if c.FormValue("confirm") != "yes" {
		return a.renderAccount(c, http.StatusOK, views.AccountVM{ConfirmClear: &row})
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	err = a.auth.Limiter.Clear(ctx, user, addr)
	cancel()
	if err != nil {
		a.log.Error("clearing a sign-in lock-out failed: the audit Redis cannot record it", "user", user, "remote_locked", addr, "by", id.User, "err", err)
		return a.renderAccount(c, http.StatusServiceUnavailable, views.AccountVM{
			Error: "The lock-out may still hold: the audit Redis cannot be reached. Try again in a moment."})
	}
	a.log.Warn("sign-in lock-out cleared", "user", user, "remote_locked", addr, "by", id.ActorName(), "remote", a.clientAddr(c))
	who := "every account"
	if user != "" {
		who = views.EscapeName(user)
	}
	return a.renderAccount(c, http.StatusOK, views.AccountVM{Done: "The lock-out of " + addr + " from " + who + " is cleared: that address may sign in again."})
}
