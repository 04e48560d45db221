package handlers

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// safeNext keeps post-sign-in redirects on this site: a path, nothing a
// browser could read as another host ("//x", "/\\x", control characters
// that browsers strip, as in "/\t/x").
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.ContainsAny(next, "\\") {
		return "/"
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(u.Path, "//") || strings.HasPrefix(next, "//") {
		return "/"
	}
	return next
}

func (a *App) loginPage(c echo.Context) error {
	if identity(c).Signed() {
		return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
	}
	if a.auth.Users == nil {
		return echo.NewHTTPError(http.StatusNotFound, "Sign-in is not configured on this console.")
	}
	vm := views.LoginVM{Next: safeNext(c.QueryParam("next"))}
	return render(c, http.StatusOK, vm, views.LoginPage(a.page(c, "Sign in", ""), vm))
}

func (a *App) login(c echo.Context) error {
	if a.auth.Users == nil {
		return echo.NewHTTPError(http.StatusNotFound, "Sign-in is not configured on this console.")
	}
	ctx := c.Request().Context()
	name := strings.TrimSpace(c.FormValue("username"))
	pw := c.FormValue("password")
	vm := views.LoginVM{Next: safeNext(c.FormValue("next")), Username: name}
	if name == "" || pw == "" || len(name) > 64 || len(pw) > 1024 {
		vm.Error = "Enter your user name and password."
		return render(c, http.StatusBadRequest, vm, views.LoginPage(a.page(c, "Sign in", ""), vm))
	}
	ip := a.clientAddr(c)
	v := a.auth.Limiter.Attempt(ctx, name, ip)
	if v.Busy {
		secs := int(math.Ceil(v.Wait.Seconds()))
		c.Response().Header().Set("Retry-After", fmt.Sprint(secs))
		vm.Error = "This account is receiving many sign-in attempts, so they are taken one at a time and the queue is full. Nothing was checked and you are not locked out: try again in " + format.Duration(time.Duration(secs)*time.Second) + "."
		a.log.Warn("sign-in refused: the account's queue of slowed-down attempts is full", "user", name, "remote", ip, "retry_after_s", secs)
		return render(c, http.StatusTooManyRequests, vm, views.LoginPage(a.page(c, "Sign in", ""), vm))
	}
	if v.Wait > 0 {
		secs := int(math.Ceil(v.Wait.Seconds()))
		c.Response().Header().Set("Retry-After", fmt.Sprint(secs))
		vm.Error = "Too many failed sign-ins. Try again in " + format.Duration(time.Duration(secs)*time.Second) + "."
		a.log.Warn("sign-in refused: locked out", "user", name, "remote", ip, "retry_after_s", secs)
		return render(c, http.StatusTooManyRequests, vm, views.LoginPage(a.page(c, "Sign in", ""), vm))
	}
	if ctx.Err() != nil {
		return ctx.Err() // the client left during the slow-down
	}
	u, ok := a.auth.Users.Authenticate(name, pw)
	if !ok {
		a.log.Warn("sign-in failed", "user", name, "remote", ip, "slowed_ms", v.Delay.Milliseconds())
		if v.LastForPair {
			a.log.Warn("sign-in lock-out: this address may not sign in to this account until the window ends; an admin may clear it on /account",
				"user", name, "remote", ip, "until", v.PairUntil.UTC().Format(time.RFC3339))
		}
		if v.LastForAddr {
			a.log.Warn("sign-in lock-out: this address may not sign in to any account until the window ends; an admin may clear it on /account",
				"remote", ip, "until", v.AddrUntil.UTC().Format(time.RFC3339))
		}
		vm.Error = "Wrong user name or password."
		return render(c, http.StatusUnauthorized, vm, views.LoginPage(a.page(c, "Sign in", ""), vm))
	}
	a.auth.Limiter.Succeeded(ctx, name, ip)
	c.SetCookie(&http.Cookie{
		Name: sessionCookie, Value: a.signer.NewSession(u, a.auth.SessionTTL, a.now()),
		Path: "/", HttpOnly: true, Secure: a.secureRequest(c), SameSite: http.SameSiteLaxMode,
		MaxAge: int(a.auth.SessionTTL.Seconds()),
	})
	a.log.Info("signed in", "user", u.Name, "role", u.Level.String(), "remote", ip)
	return c.Redirect(http.StatusSeeOther, vm.Next)
}

// logout ends the session on every replica, not only in this browser: a
// copy of the cookie stops working, and open live views close. If the end
// cannot be recorded the session is left as it was and the user is told
// (failing closed: a sign-out that did not happen must not look done).
func (a *App) logout(c echo.Context) error {
	if id := identity(c); id.Via == "session" {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
		err := a.auth.Sessions.Revoke(ctx, id.Session, id.Expires)
		cancel()
		if err != nil {
			a.log.Error("sign-out failed: the session store cannot record it; the session stays valid", "user", id.User, "err", err)
			return echo.NewHTTPError(http.StatusServiceUnavailable, "You are still signed in: the session store (the audit Redis) cannot be reached, so this session could not be ended on the server. Try again in a moment.")
		}
		a.log.Info("signed out", "user", id.User)
	}
	a.clearSession(c)
	if a.auth.Users == nil {
		return c.Redirect(http.StatusSeeOther, route.Home)
	}
	return c.Redirect(http.StatusSeeOther, route.Login)
}

func (a *App) clearSession(c echo.Context) {
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: a.secureRequest(c), SameSite: http.SameSiteLaxMode, MaxAge: -1})
}
