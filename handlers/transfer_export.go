package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/browse"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/transfer"
	"github.com/keydeck/keydeck/views"
)

// exportKeys streams one key, a family's keys or a glob's as JSON Lines
// (docs/export-format.md). Any role may export: a viewer reads the same
// values on the key page, and a sensitive family's values are withheld
// here as there. The walk draws from the caller's share of the
// connection's scan budget, like a search.
func (a *App) exportKeys(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	sel, what, err := parseExport(conn, c.QueryParams())
	if err != nil {
		return err
	}
	if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
		return fmt.Errorf("%w: Redis is unreachable — %s: nothing was exported", redisview.ErrRead, statusText(st))
	}
	budget := a.scanTap(conn.Name, identity(c).Holder())
	w := &lazyNDJSON{c: c, name: exportFilename(conn.Name, db, what)}
	e := transfer.ExportOf(conn, db, sel, budget)
	e.Skip, e.Flush = a.protected, w.flush
	_, err = e.Run(c.Request().Context(), w)
	switch {
	case err == nil:
		w.start() // an empty selection is an empty file
		return nil
	case !w.started:
		return fmt.Errorf("%w: nothing was exported: %s", redisview.ErrRead, conn.SafeErr(err))
	}
	// The lines sent stay sent; a last line that is not a key says the
	// file is cut short, and an import refuses it, naming that line.
	c.Logger().Warnf("export cut short: %v", conn.SafeErr(err))
	_, _ = w.Write(cutShortLine(conn.SafeErr(err)))
	return nil
}

// cutShortLine is the last line of an export cut short: JSON (encoding/json
// escapes what Go's %q would not write as JSON), not a key.
func cutShortLine(why string) []byte {
	msg, _ := json.Marshal(map[string]string{"error": "export cut short: " + why})
	return append(msg, '\n')
}

// parseExport reads ?key=, ?family= or ?pattern= (exactly one), and
// names the selection for the file name.
func parseExport(conn *redisview.Conn, q url.Values) (transfer.Selection, string, error) {
	var sel transfer.Selection
	n := 0
	for _, p := range []string{"key", "family", "pattern"} {
		if q.Has(p) {
			n++
		}
	}
	if n != 1 {
		return sel, "", fmt.Errorf("%w: name what to export with exactly one of ?key=K, ?family=ID or ?pattern=GLOB", route.ErrParam)
	}
	switch {
	case q.Has("key"):
		k := q.Get("key")
		if k == "" || len(k) > route.MaxKey {
			return sel, "", fmt.Errorf("%w: key: name a key of at most 64 KiB", route.ErrParam)
		}
		sel.Key = k
		return sel, "key", nil
	case q.Has("family"):
		id := q.Get("family")
		var f *schema.Family
		if p := conn.Pack(); p != nil {
			f = p.Family(id)
		}
		if f == nil {
			return sel, "", fmt.Errorf("%w: family %q is not one of the connection's pack", route.ErrParam, id)
		}
		sel.Family, sel.Classifier = f, conn.Classifier()
		return sel, "family-" + id, nil
	}
	sel.Pattern = q.Get("pattern")
	if err := transfer.CheckGlob(sel.Pattern); err != nil {
		return sel, "", fmt.Errorf("%w: %v", route.ErrParam, strings.TrimPrefix(err.Error(), transfer.ErrSelection.Error()+": "))
	}
	return sel, "pattern", nil
}

var unsafeFilename = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// exportFilename is the download's name: connection, database and what.
func exportFilename(conn string, db int, what string) string {
	return unsafeFilename.ReplaceAllString(fmt.Sprintf("keydeck-%s-db%d-%s", conn, db, what), "_") + ".jsonl"
}

// lazyNDJSON sends the headers with the first line, so that an export
// failing before any line answers with an error page instead.
type lazyNDJSON struct {
	c       echo.Context
	name    string
	started bool
}

func (w *lazyNDJSON) start() {
	if w.started {
		return
	}
	w.started = true
	h := w.c.Response().Header()
	h.Set(echo.HeaderContentType, "application/x-ndjson")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+w.name+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.c.Response().WriteHeader(http.StatusOK)
}

func (w *lazyNDJSON) Write(p []byte) (int, error) {
	w.start()
	return w.c.Response().Write(p)
}

func (w *lazyNDJSON) flush() {
	if w.started {
		w.c.Response().Flush()
	}
}

// keysExport is a key list's export link and what the file holds: a
// family's keys, or for a prefix list every key starting with the prefix
// (a glob cannot leave out the keys a family matches, nor deeper names).
func keysExport(l keyList, req browse.Request) (href, note string) {
	if f := req.Family; f != nil {
		note = "Every key of the family in db" + strconv.Itoa(l.DB) + ", not only this page"
		if f.Sensitive {
			return route.ExportFamilyURL(l.Conn, l.DB, f.ID), note + ": the family is sensitive, so each line names a key, its type and TTL, without the value."
		}
		return route.ExportFamilyURL(l.Conn, l.DB, f.ID), note + ", with types, TTLs and values (docs/export-format.md)."
	}
	if l.Pattern != "" {
		if transfer.CheckGlob(l.Pattern) != nil {
			return "", ""
		}
		return route.ExportPatternURL(l.Conn, l.DB, l.Pattern), "Every key SCAN MATCH finds with this pattern, not only this page; values of sensitive families are withheld."
	}
	glob := schema.EscapeGlob(l.Prefix) + "*"
	if transfer.CheckGlob(glob) != nil {
		return "", ""
	}
	return route.ExportPatternURL(l.Conn, l.DB, glob), "Every key starting with this prefix (SCAN MATCH " + views.ValidText(glob) +
		"), keys of families and deeper names included; values of sensitive families are withheld."
}
