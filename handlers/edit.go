package handlers

import (
	"encoding/hex"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/value"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// argField is the form input of a kind's argument.
func argField(a action.Arg) views.ArgField {
	return views.ArgField{Name: a.Name, Help: a.Help, Input: a.Input, Choices: a.Choices, Optional: a.Optional}
}

// maxEditPrefill bounds the string a key page fills its edit form with:
// what the page reads whole (value.MaxString). Its hex (2 bytes a byte)
// and the token carrying it again are far within what an admin's preview
// and confirmation may post (maxActionBody), so every form filled in can be
// sent; a longer value is not filled in, and the form says so.
const maxEditPrefill = value.MaxString

// editValue is a string's value as the edit form shows it: as text when a
// textarea gives it back exactly, else in hex. HTML drops a leading line
// break, turns NUL into U+FFFD and CR or CRLF into LF, and other control
// bytes are not reliably typed back, so a value holding any control byte
// but tab and line feed is in hex, as is one that is not UTF-8.
func editValue(v string) (string, string) {
	switch {
	case len(v) > maxEditPrefill:
		return "", ""
	case utf8.ValidString(v) && !strings.HasPrefix(v, "\n") && !strings.ContainsFunc(v, textareaUnsafe):
		return v, action.EncodingText
	}
	return hex.EncodeToString([]byte(v)), action.EncodingHex
}

// textareaUnsafe is a character a textarea may not give back as it was.
func textareaUnsafe(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f
}

// prefillEdit fills a string's edit form with its current value, or says
// why it is not filled in.
func prefillEdit(f *views.ActionForm, v views.ValueVM) {
	if f.Kind != action.KindSetString || v.Withheld || !v.IsString {
		return
	}
	for i := range f.Args {
		switch f.Args[i].Name {
		case action.ArgValue:
			if v.EditEncoding == "" {
				f.Args[i].Help += " (its current value is not filled in: it is longer than the " + format.Bytes(maxEditPrefill) + " this page reads whole; type the whole new value)"
			}
			f.Args[i].Value = v.Edit
		case action.ArgEncoding:
			f.Args[i].Value = v.EditEncoding
		}
	}
}

// offered reports whether the key page offers form f: persist only on a
// key with a TTL (keyBase's TTL "none"), where it is not refused.
func offered(f views.ActionForm, vm views.KeyVM) bool {
	return f.Kind != action.KindPersist || vm.TTL != "none"
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
