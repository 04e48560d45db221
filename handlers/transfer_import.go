package handlers

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/transfer"
	"github.com/keydeck/keydeck/views"
)

// maxImportBytes bounds an uploaded file (the body of the upload).
const maxImportBytes = 32 << 20

// importLimits read an upload: a line may be as long as the file.
var importLimits = transfer.Limits{LineBytes: maxImportBytes, Lines: transfer.DefaultLimits.Lines}

// previewRows bounds the lines the preview lists (the counts are of all).
const previewRows = 500

var importPath = regexp.MustCompile(`^/c/[^/]+/db/[0-9]+/import$`)

// importUpload: the request is an import's upload, the one multipart
// body the console takes, up to maxImportBytes (limitBody).
func importUpload(req *http.Request) bool {
	return req.Method == http.MethodPost && importPath.MatchString(req.URL.Path)
}

// importPage is the upload form.
func (a *App) importPage(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	p := a.page(c, fmt.Sprintf("Import into db%d", db), conn.Name)
	vm := a.importVM(conn.Name, db, p.CSRF)
	return render(c, http.StatusOK, vm, views.ImportPage(p, vm))
}

func (a *App) importVM(conn string, db int, csrf string) views.ImportVM {
	vm := views.ImportVM{Conn: conn, DB: db, Action: route.ImportURL(conn, db) + "?_csrf=" + url.QueryEscape(csrf),
		Limits: fmt.Sprintf("A JSON Lines file as Keydeck exports it (docs/export-format.md), at most 32 MB and %s keys.", strconv.Itoa(importLimits.Lines))}
	if a.bulk == nil {
		vm.Off = "Imports are not available on this console."
	}
	return vm
}

// importPreview reads the uploaded file, classes its lines against the
// database and prepares the job (nothing is written until it is started).
func (a *App) importPreview(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	p := a.page(c, fmt.Sprintf("Import into db%d", db), conn.Name)
	vm := a.importVM(conn.Name, db, p.CSRF)
	fail := func(status int, msg string) error {
		vm.Err = msg
		return render(c, status, vm, views.ImportPage(p, vm))
	}
	if a.bulk == nil {
		return fail(http.StatusServiceUnavailable, vm.Off)
	}
	name, recs, err := readUpload(c.Request())
	var le *transfer.LineError
	switch {
	case errors.As(err, &le):
		return fail(http.StatusBadRequest, "Nothing was imported: "+views.ValidText(le.Error()))
	case err != nil:
		return fail(http.StatusBadRequest, "Nothing was imported: "+err.Error())
	case len(recs) == 0:
		return fail(http.StatusBadRequest, "Nothing was imported: the file holds no key.")
	}
	ctx := c.Request().Context()
	pv, err := transfer.PreviewImport(ctx, conn, db, recs, a.protected, a.scanTap(conn.Name, identity(c).Holder()))
	if err != nil {
		return fail(http.StatusBadGateway, "The database could not be read for the preview: "+conn.SafeErr(err))
	}
	pvm := importPreviewVM(conn.Name, db, name, pv)
	pvm.CSRF = p.CSRF
	if writes := pv.Writes(); len(writes) > 0 {
		items := make([]bulk.Item, 0, len(writes))
		for _, r := range writes {
			it, err := transfer.Item(r)
			if err != nil {
				return err
			}
			items = append(items, it)
		}
		j, err := a.bulk.Prepare(ctx, actor(c), conn, bulk.Spec{Kind: transfer.KindImport, Sel: bulk.Selection{DB: db, Label: name}}, items)
		if err != nil {
			return err
		}
		pvm.Confirm, pvm.Typed, pvm.Count = route.ImportStartURL(conn.Name, db, j.ID), j.NeedsTypedCount(), j.Count
		pvm.UndoNote = importUndoNote(j)
	}
	return render(c, http.StatusOK, pvm, views.ImportPreviewPage(p, pvm))
}

// readUpload reads the multipart body's file part ("file") line by line.
func readUpload(req *http.Request) (string, []transfer.Record, error) {
	if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return "", nil, errors.New("send the file as multipart/form-data (the upload form does)")
	}
	mr, err := req.MultipartReader()
	if err != nil {
		return "", nil, err
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return "", nil, errors.New("no file was sent")
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return "", nil, fmt.Errorf("the file is larger than %d MB", maxImportBytes>>20)
		}
		if err != nil {
			return "", nil, err
		}
		if part.FormName() != "file" {
			continue
		}
		recs, err := transfer.ReadAll(part, importLimits)
		if errors.As(err, &tooBig) {
			return "", nil, fmt.Errorf("the file is larger than %d MB", maxImportBytes>>20)
		}
		return part.FileName(), recs, err
	}
}

// importStart confirms a previewed import: the job starts, and its page
// (progress, cancel, undo) is the bulk job's.
func (a *App) importStart(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	if a.bulk == nil {
		return fmt.Errorf("%w: imports are not available on this console", action.ErrInvalid)
	}
	// Only an import of this connection's database starts here; any
	// other job is not found at this address.
	j, err := a.bulkJobOf(c)
	if err != nil {
		return err
	}
	if j.Spec.Kind != transfer.KindImport || j.Spec.Sel.DB != db {
		return bulk.ErrNotFound
	}
	var typed int64
	if s := strings.TrimSpace(c.FormValue("typed")); s != "" {
		if typed, err = strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64); err != nil {
			return fmt.Errorf("%w: type the number of keys to confirm", action.ErrInvalid)
		}
	}
	j, err = a.bulk.Start(c.Request().Context(), actor(c), j.ID, typed)
	if err != nil {
		return withBack(err, route.ImportURL(conn.Name, db))
	}
	return c.Redirect(http.StatusSeeOther, route.BulkJobURL(conn.Name, j.ID))
}
