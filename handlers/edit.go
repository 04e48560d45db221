package handlers

import (
	"encoding/hex"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
)

// argField is the form input of a kind's argument.
func argField(a action.Arg) views.ArgField {
	return views.ArgField{Name: a.Name, Help: a.Help, Input: a.Input, Choices: a.Choices, Optional: a.Optional}
}

// maxEditPrefill bounds the string a key page fills its edit form with.
const maxEditPrefill = 64 << 10

// editValue is a string's value as the edit form shows it: as text when a
// textarea gives it back exactly (valid UTF-8, no CR, not starting with a
// line break, which HTML drops), else in hex.
func editValue(v string) (string, string) {
	switch {
	case len(v) > maxEditPrefill:
		return "", ""
	case utf8.ValidString(v) && !strings.Contains(v, "\r") && !strings.HasPrefix(v, "\n"):
		return v, action.EncodingText
	}
	return hex.EncodeToString([]byte(v)), action.EncodingHex
}

// prefillEdit fills a string's edit form with its current value.
func prefillEdit(f *views.ActionForm, v views.ValueVM) {
	if f.Kind != action.KindSetString || v.Withheld || v.EditEncoding == "" {
		return
	}
	for i := range f.Args {
		switch f.Args[i].Name {
		case action.ArgValue:
			f.Args[i].Value = v.Edit
		case action.ArgEncoding:
			f.Args[i].Value = v.EditEncoding
		}
	}
}

// createKeyPreview previews the database page's Create key form: the
// action create-key, the name carried byte-exact (route.ParseCreate).
func (a *App) createKeyPreview(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read.")
	}
	cf, err := route.ParseCreate(form)
	if err != nil {
		return withBack(err, route.DatabaseURL(conn.Name, db))
	}
	req := action.Request{Conn: conn.Name, DB: db, Key: cf.Name, Args: cf.Args}
	return a.preview(c, action.KindCreateKey, req, route.DatabaseURL(conn.Name, db))
}

// createForm is the database page's Create key form, nil when the user
// may not create keys (read-only, no actions, a role below admin).
func (a *App) createForm(c echo.Context, conn string, db int) *views.CreateKeyForm {
	if a.auth.ReadOnly || a.actions == nil || !a.actions.Allowed(actor(c), action.KindCreateKey) {
		return nil
	}
	return &views.CreateKeyForm{Action: route.CreateKeyURL(conn, db), Types: action.CreateTypes}
}
