package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
)

// The request a page's twin operation sees carries the connection's name
// in URL.Path as its bytes and escaped once in RawPath (and RequestURI):
// a name with a space or a '%' was escaped into Path, so the operation's
// URL (its logs, its RequestURI) read a%2520b for "a b".
func TestTwinRequestCarriesPathBytesOnce(t *testing.T) {
	t.Parallel()
	e := echo.New()
	var got *http.Request
	e.GET("/api/v1/connections/:conn/overview", func(c echo.Context) error {
		got = c.Request()
		return c.String(http.StatusOK, c.Param("conn"))
	})
	const name = "a b%c/d"
	rec := httptest.NewRecorder()
	c := e.NewContext(httptest.NewRequest(http.MethodGet, "/c/x", nil), rec)
	c.SetParamNames("conn")
	c.SetParamValues(name)
	if err := (&App{}).serveTwin(e, c, twin(route.APIOverview, nil), nil); err != nil {
		t.Fatal(err)
	}
	if rec.Body.String() != name {
		t.Errorf("the operation's conn = %q, want %q", rec.Body.String(), name)
	}
	const escaped = "/api/v1/connections/a%20b%25c%2Fd/overview"
	if got == nil || got.URL.Path != "/api/v1/connections/"+name+"/overview" || got.URL.EscapedPath() != escaped || got.RequestURI != escaped {
		t.Errorf("the operation's URL: Path %q, escaped %q, RequestURI %q; want Path with %q, escaped %q", got.URL.Path, got.URL.EscapedPath(), got.RequestURI, name, escaped)
	}
}
