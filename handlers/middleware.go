package handlers

import (
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// requestLog writes one structured line per request. Query strings are left
// out: they can carry key names a user typed.
func (a *App) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		req := c.Request()
		if c.Get(ctxEscapedUTF8) != nil {
			a.log.Warn("page had bytes that are not UTF-8; escaped them (a view shows a Redis name without views.Name)", "path", req.URL.Path)
		}
		a.log.Info("request",
			"method", req.Method,
			"path", req.URL.Path,
			"status", c.Response().Status,
			"bytes", c.Response().Size,
			"dur_ms", float64(time.Since(start).Microseconds())/1000,
			"remote", a.clientAddr(c),
		)
		return nil
	}
}

// recoverer turns a panic into a 500 page instead of a dropped connection.
func (a *App) recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

// securityHeaders applies a strict policy: no inline script or style, no framing.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}

// staticHandler serves embedded assets; they change only with the binary.
func staticHandler(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// maxBody bounds request bodies: forms here are a few hundred bytes, and an
// unauthenticated POST must not make the server buffer megabytes.
const maxBody = 64 << 10

// maxActionBody bounds the body of an action's preview, Create key and
// execute for a signed-in admin (who alone may write values). A value of
// up to action.MaxEditBytes travels in the preview's form (URL-encoded: at
// most 3 bytes a byte; hex: 2) and again inside the sealed token confirmed
// at execute: JSON (a control byte or <, >, & takes 6 bytes), base64,
// sealed, base64 again (×16/9), which is at most about 10.7 bytes a byte.
// A 1 MiB value of any bytes can so be written; anyone else keeps maxBody.
const maxActionBody = 11*action.MaxEditBytes + maxBody

// actionPath is a route whose body carries an edit's value.
var actionPath = regexp.MustCompile(`^(` + regexp.QuoteMeta(route.Preview) + `|` + regexp.QuoteMeta(route.Execute) + `|` +
	regexp.QuoteMeta(route.APIPreview) + `|` + regexp.QuoteMeta(route.APIExecute) + `|/c/[^/]+/db/[0-9]+/create-key)$`)

// limitBody runs after identify: only a signed-in admin's action POST may
// be larger than maxBody.
func (a *App) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		limit := int64(maxBody)
		switch id := identity(c); {
		case importUpload(req):
			limit = maxImportBytes // a file, read by its handler after the role check
		case req.Method == http.MethodPost && actionPath.MatchString(req.URL.Path) && id.Signed() && id.Level >= action.Admin:
			limit = maxActionBody
		}
		if req.ContentLength > limit {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "The request is too large.")
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
		if strings.HasPrefix(req.Header.Get("Content-Type"), "multipart/") && !importUpload(req) {
			return echo.NewHTTPError(http.StatusUnsupportedMediaType, "Forms are sent URL-encoded.")
		}
		return next(c)
	}
}
