package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/static"
)

// Routes registers every route of the console.
func (a *App) Routes(e *echo.Echo) {
	e.HTTPErrorHandler = a.errorHandler
	e.Use(a.recoverer, a.requestLog, securityHeaders, a.checkHost, limitBody, a.identify, a.sameOriginWrite)

	// Public: probes, assets, signing in and out.
	e.GET("/healthz", a.healthz)
	e.GET("/readyz", a.readyz)
	e.GET("/static/*", echo.WrapHandler(http.StripPrefix("/static/", staticHandler(static.FS))))
	e.GET("/login", a.loginPage)
	e.POST("/login", a.login)
	e.POST("/logout", a.logout)

	// Reading needs any role.
	view := e.Group("", a.requireRole(action.Viewer))
	view.GET("/", a.home)
	view.GET("/c/:conn", a.overview)
	view.GET("/c/:conn/db/:db", a.dbPage)
	view.GET("/c/:conn/db/:db/key", a.keyPage)
	view.GET("/audit", a.auditPage)
	view.GET("/leaderboards", a.leaderboardList)
	view.GET("/c/:conn/db/:db/leaderboard", a.leaderboardPage)
	view.GET("/ws", a.websocket)
	view.GET("/account", a.accountPage)
	view.POST("/account/sign-out-everywhere", a.signOutEverywhere)

	// Actions: the runner checks each kind's role again; support is the
	// lowest role with any action.
	act := e.Group("/actions", a.requireRole(action.Support), a.writable)
	act.POST("/preview", a.previewAction)
	// A preview changes nothing, so links may open it, but only from this
	// console: it reads the keys it names, which a cross-site page must not
	// be able to make a signed-in admin do.
	act.GET("/preview", a.previewAction, sameSiteNavigation)
	act.GET("/undo", a.undoPreview, sameSiteNavigation)
	act.POST("/execute", a.executeAction)
}
