package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/static"
)

// Routes registers every route of the console.
func (a *App) Routes(e *echo.Echo) {
	e.HTTPErrorHandler = a.errorHandler
	e.Use(a.recoverer, a.requestLog, securityHeaders)

	e.GET("/", a.home)
	e.GET("/c/:conn", a.overview)
	e.GET("/c/:conn/db/:db", a.dbPage)
	e.GET("/ws", a.websocket)
	e.GET("/healthz", a.healthz)
	e.GET("/readyz", a.readyz)
	e.GET("/static/*", echo.WrapHandler(http.StripPrefix("/static/", staticHandler(static.FS))))
}
