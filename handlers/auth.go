package handlers

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// Auth configures who may do what.
type Auth struct {
	// Users may sign in with a password; nil means no users file.
	Users *people.Users
	// Secret signs session cookies and CSRF tokens (≥ 32 bytes; share it
	// between replicas).
	Secret     []byte
	SessionTTL time.Duration
	// Open: no users and a loopback address — everyone who can reach the
	// console is admin, and every page says so.
	Open bool
	// ReadOnly disables every action for every role.
	ReadOnly bool
	// Limiter counts failed sign-ins per account and per address.
	Limiter people.Limiter
	// Sessions records ended sessions for every replica (required with
	// Users).
	Sessions people.Revocations
	// Tokens keeps the API tokens (Authorization: Bearer kdt_…); nil: no
	// tokens are offered, and every bearer token is refused.
	Tokens Tokens
	// Proxy mode: identity headers are trusted only from these addresses.
	TrustedProxies []netip.Prefix
	UserHeader     string // default X-Forwarded-User
	EmailHeader    string // default X-Forwarded-Email
	RoleHeader     string // optional; otherwise the users file, else viewer
	// ProxyMatch is the one field a proxy identity is looked up by in the
	// users file: "name" (the user header; the default) or "email".
	ProxyMatch string
	// AllowedHosts are extra Host names (without port) the console answers
	// to in open mode, besides loopback names and addresses.
	AllowedHosts []string
	// ReadyzDetail shows anonymous /readyz callers which connections are
	// down; otherwise only signed-in users see the names.
	ReadyzDetail bool
}

const (
	sessionCookie = "kd_session"
	csrfCookie    = "kd_csrf"
	ctxIdentity   = "kd.identity"
	ctxCSRF       = "kd.csrf"
)

func identity(c echo.Context) people.Identity {
	id, _ := c.Get(ctxIdentity).(people.Identity)
	return id
}

// clientAddr is the TCP peer; forwarded-for headers count only from a
// trusted proxy.
func (a *App) clientAddr(c echo.Context) string {
	host, _, err := net.SplitHostPort(c.Request().RemoteAddr)
	if err != nil {
		host = c.Request().RemoteAddr
	}
	if a.fromTrustedProxy(c) {
		// The proxy appends the address it saw; entries to its left are
		// whatever the client claimed. Some proxies (HAProxy) append a
		// header line of their own instead: all lines are one list, in
		// order. Walk from the right past our own trusted proxies.
		hops := strings.Split(strings.Join(c.Request().Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			h := strings.TrimSpace(hops[i])
			ip, err := netip.ParseAddr(h)
			if err != nil {
				break
			}
			if !a.trusted(ip) {
				return h
			}
		}
	}
	return host
}

func (a *App) fromTrustedProxy(c echo.Context) bool {
	if len(a.auth.TrustedProxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(c.Request().RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return a.trusted(ip)
}

func (a *App) trusted(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range a.auth.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// secureRequest tells whether cookies may be marked Secure.
func (a *App) secureRequest(c echo.Context) bool {
	if c.Request().TLS != nil {
		return true
	}
	return a.fromTrustedProxy(c) && strings.EqualFold(c.Request().Header.Get("X-Forwarded-Proto"), "https")
}

// identify works out the request's identity and its CSRF cookie.
func (a *App) identify(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h := a.repeatedIdentityHeader(c); h != "" {
			return echo.NewHTTPError(http.StatusBadRequest, "The request carries the identity header "+h+" more than once; the proxy must send exactly one.")
		}
		if secret, ok := a.bearerToken(c); ok {
			// A script's request: no session cookie read, no CSRF cookie
			// set (sameOriginWrite lets it through without one).
			id, p := a.bearerIdentity(c, secret)
			if p != nil {
				return a.refuseBearer(c, p)
			}
			c.Set(ctxIdentity, id)
			return next(c)
		}
		id := a.whoIs(c)
		c.Set(ctxIdentity, id)
		// Every browser gets a CSRF cookie; forms carry a token signed over
		// it and the identity (csrfBinding).
		ck, err := c.Cookie(csrfCookie)
		val := ""
		if err == nil && len(ck.Value) >= 16 {
			val = ck.Value
		} else {
			val = people.RandomToken()
			c.SetCookie(&http.Cookie{Name: csrfCookie, Value: val, Path: "/", HttpOnly: true, Secure: a.secureRequest(c), SameSite: http.SameSiteStrictMode})
		}
		c.Set(ctxCSRF, a.signer.CSRFToken(val, id.CSRFBinding()))
		return next(c)
	}
}

// repeatedIdentityHeader names an identity header a trusted proxy's request
// carries more than once: which copy is meant is not ours to guess (a proxy
// that appends its header to the client's would otherwise let the first,
// the client's own, decide).
func (a *App) repeatedIdentityHeader(c echo.Context) string {
	if !a.fromTrustedProxy(c) {
		return ""
	}
	for _, h := range []string{a.auth.UserHeader, a.auth.EmailHeader, a.auth.RoleHeader} {
		if h != "" && len(c.Request().Header.Values(h)) > 1 {
			return h
		}
	}
	return ""
}

func (a *App) whoIs(c echo.Context) people.Identity {
	req := c.Request()
	if secret, ok := a.bearerToken(c); ok {
		// Checked again by an open websocket: a revoked token stops it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), tokenTimeout)
		defer cancel()
		id, _ := a.tokenIdentity(ctx, secret)
		return id
	}
	if a.fromTrustedProxy(c) {
		user := strings.TrimSpace(req.Header.Get(a.auth.UserHeader))
		email := strings.TrimSpace(req.Header.Get(a.auth.EmailHeader))
		if user != "" || email != "" {
			id := people.Identity{User: user, Level: action.Viewer, Via: "proxy"}
			if id.User == "" {
				id.User = email
			}
			if u, ok := a.auth.Users.MatchProxy(a.auth.ProxyMatch, user, email); ok {
				id.User, id.Level = u.Name, u.Level
			} else {
				id.Unmatched = true
			}
			if a.auth.RoleHeader != "" {
				if r, err := action.ParseLevel(req.Header.Get(a.auth.RoleHeader)); err == nil {
					id.Level = r
				}
			}
			return id
		}
	}
	if a.auth.Open {
		level := action.Admin
		if a.auth.ReadOnly {
			level = action.Viewer
		}
		return people.Identity{User: "anonymous", Level: level, Via: "open"}
	}
	ck, err := c.Cookie(sessionCookie)
	if err != nil {
		return people.Identity{}
	}
	ss, err := a.signer.ReadSession(ck.Value, a.now())
	if err != nil {
		return people.Identity{}
	}
	u, ok := a.auth.Users.Lookup(ss.User)
	if !ok {
		return people.Identity{} // removed from the users file
	}
	if !a.sessionLive(c, ss, u) {
		return people.Identity{} // signed out, or a new password since
	}
	return people.Identity{User: u.Name, Level: u.Level, Via: "session", Session: ss.Nonce,
		Issued: time.UnixMilli(ss.Issued), Expires: time.Unix(ss.Expires, 0)}
}

// sessionLive tells whether a signed, unexpired session still holds (see
// people.Live); an unreadable store is logged at most every 30 s. Not the
// request's own context: an open websocket checks again long after its
// request was hijacked.
func (a *App) sessionLive(c echo.Context, ss people.Session, u people.User) bool {
	live, err := people.Live(context.WithoutCancel(c.Request().Context()), a.auth.Sessions, a.signer, ss, u)
	if err != nil {
		a.storeDown.Warn(a.log, err)
	}
	return live
}

// requireLevel guards a route: anonymous browsers are sent to sign in,
// signed-in users below the level need get 403.
func (a *App) requireLevel(need action.Level) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id := identity(c)
			if !id.Signed() {
				if c.Request().Method == http.MethodGet && c.Request().URL.Path != route.Live && !route.IsAPI(c.Request().URL.Path) {
					return c.Redirect(http.StatusSeeOther, route.LoginURL(c.Request().URL.RequestURI()))
				}
				return echo.NewHTTPError(http.StatusUnauthorized, "Sign in first.")
			}
			if id.Level < need {
				return echo.NewHTTPError(http.StatusForbidden, "Your role ("+id.Level.String()+") may not do this; it needs "+need.String()+".")
			}
			return next(c)
		}
	}
}

// sameOriginWrite refuses state-changing requests from other sites: the
// Origin (or Sec-Fetch-Site) must say same-origin, and the form or header
// must carry the CSRF token bound to this browser's cookie and identity.
func (a *App) sameOriginWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == http.MethodOptions {
			return next(c)
		}
		// A bearer token is sent by a script, never added by a browser on
		// its own (a cross-site page cannot set the header without a CORS
		// preflight, which is not answered): no CSRF token is needed.
		if identity(c).Via == "token" {
			return next(c)
		}
		if route.IsAPI(req.URL.Path) && !identity(c).Signed() {
			return next(c) // no API operation is public: its guard answers 401
		}
		if !sameOriginRequest(req) {
			return echo.NewHTTPError(http.StatusForbidden, "Cross-site request refused.")
		}
		ck, err := c.Cookie(csrfCookie)
		token := req.Header.Get("X-CSRF-Token")
		if token == "" && importUpload(req) {
			// The upload's token is in its query: reading the form would
			// read the file before the route's role check.
			token = req.URL.Query().Get("_csrf")
		} else if token == "" {
			token = c.FormValue("_csrf")
		}
		if err != nil || !a.signer.ValidCSRF(ck.Value, identity(c).CSRFBinding(), token) {
			return echo.NewHTTPError(http.StatusForbidden, "The form expired or did not come from this console; reload the page and try again.")
		}
		return next(c)
	}
}

func sameOriginRequest(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err == nil && strings.EqualFold(u.Host, r.Host)
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	}
	return false
}

// writable refuses actions on a read-only console or without a runner.
func (a *App) writable(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if a.auth.ReadOnly || a.actions == nil {
			return echo.NewHTTPError(http.StatusForbidden, "This console is read-only: every action is disabled.")
		}
		return next(c)
	}
}

// checkHost defeats DNS rebinding in open mode: a page on another site that
// re-resolves its name to 127.0.0.1 would otherwise be same-origin with an
// unauthenticated admin console. Only loopback names and addresses (and
// --allowed-host names) are answered.
func (a *App) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !a.auth.Open || a.hostAllowed(c.Request().Host) {
			return next(c)
		}
		return echo.NewHTTPError(http.StatusMisdirectedRequest, "This console answers only to loopback host names; add --allowed-host to reach it by another name.")
	}
}

func (a *App) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	for _, h := range a.auth.AllowedHosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}
