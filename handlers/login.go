package handlers

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/views"
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
	return render(c, http.StatusOK, views.LoginPage(a.page(c, "Sign in", ""), views.LoginVM{Next: safeNext(c.QueryParam("next"))}))
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
		return render(c, http.StatusBadRequest, views.LoginPage(a.page(c, "Sign in", ""), vm))
	}
	ip := a.clientAddr(c)
	if wait := a.auth.Limiter.Attempt(ctx, name, ip); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		c.Response().Header().Set("Retry-After", fmt.Sprint(secs))
		vm.Error = fmt.Sprintf("Too many failed sign-ins. Try again in %d s.", secs)
		a.log.Warn("sign-in rate limited", "user", name, "remote", ip)
		return render(c, http.StatusTooManyRequests, views.LoginPage(a.page(c, "Sign in", ""), vm))
	}
	u, ok := a.auth.Users.Authenticate(name, pw)
	if !ok {
		a.log.Warn("sign-in failed", "user", name, "remote", ip)
		vm.Error = "Wrong user name or password."
		return render(c, http.StatusUnauthorized, views.LoginPage(a.page(c, "Sign in", ""), vm))
	}
	a.auth.Limiter.Succeeded(ctx, name, ip)
	c.SetCookie(&http.Cookie{
		Name: sessionCookie, Value: a.signer.newSession(u.Name, a.auth.SessionTTL, a.now()),
		Path: "/", HttpOnly: true, Secure: a.secureRequest(c), SameSite: http.SameSiteLaxMode,
		MaxAge: int(a.auth.SessionTTL.Seconds()),
	})
	a.log.Info("signed in", "user", u.Name, "role", u.Role.String(), "remote", ip)
	return c.Redirect(http.StatusSeeOther, vm.Next)
}

func (a *App) logout(c echo.Context) error {
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: a.secureRequest(c), SameSite: http.SameSiteLaxMode, MaxAge: -1})
	if id := identity(c); id.Via == "session" {
		a.log.Info("signed out", "user", id.User)
	}
	if a.auth.Users == nil {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}
