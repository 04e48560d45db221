package handlers

import (
	"fmt"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/transfer"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// classWords says what the import does to a key of each class.
var classWords = []struct {
	class transfer.Class
	label string
}{
	{transfer.Overwritten, "overwritten (replaced: its current value goes)"},
	{transfer.New, "new (created)"},
	{transfer.Identical, "identical (left as it is)"},
	{transfer.NoValue, "no value in the file (withheld or skipped at export: left alone)"},
	{transfer.Sensitive, "sensitive family (not imported: its value would be kept in Keydeck's job state)"},
	{transfer.Protected, "Keydeck's own (never written)"},
}

// importPreviewVM is the preview of a file: counts by class and the
// first lines, sizes only (never a value).
func importPreviewVM(conn string, db int, file string, pv transfer.Preview) views.ImportPreviewVM {
	vm := views.ImportPreviewVM{Conn: conn, DB: db, File: views.ValidText(file), Back: route.ImportURL(conn, db),
		Keys: format.Plural(int64(len(pv.Lines)), "key", "keys") + " in the file"}
	for _, cw := range classWords {
		if n := pv.Count[cw.class]; n > 0 {
			vm.Counts = append(vm.Counts, views.ImportCount{Class: string(cw.class), Label: cw.label, N: format.Count(int64(n))})
		}
	}
	for i, l := range pv.Lines {
		if i == previewRows {
			vm.More = fmt.Sprintf("The first %d lines are listed; the counts above are of all %s.", previewRows, format.Count(int64(len(pv.Lines))))
			break
		}
		row := views.ImportRow{Line: l.Line, Key: string(l.Record.Key), Class: string(l.Verdict.Class), Type: l.Record.Type,
			Size: sizeText(transfer.SizeOf(l.Record)), ClassText: string(l.Verdict.Class)}
		if l.Verdict.TTLDiffers {
			row.ClassText += " (TTL differs: the file's is set)"
		}
		if l.Verdict.Class == transfer.Overwritten || l.Verdict.Class == transfer.Identical {
			row.Current = sizeText(l.Verdict.Current)
		}
		vm.Rows = append(vm.Rows, row)
	}
	if len(pv.Writes()) == 0 {
		vm.Nothing = "Nothing to import: no key of the file would change."
	}
	return vm
}

// sizeText is a key's size for a person: type, elements, bytes, TTL.
func sizeText(s transfer.Size) string {
	if s.Type == "" {
		return "—"
	}
	t := s.Type
	if s.Over != "" {
		return t + ", " + s.Over
	}
	if s.Type != transfer.TypeString {
		t += ", " + format.Plural(s.Elements, "element", "elements")
	}
	t += ", " + format.Bytes(s.Bytes)
	if s.TTL > 0 {
		return t + ", TTL " + format.TTL(s.TTL)
	}
	return t + ", no TTL"
}

// importUndoNote says up front whether the import can be undone.
func importUndoNote(j bulk.Job) string {
	if j.Undoable {
		return "Undoable: the prior state of every key is recorded, so undo restores the overwritten keys (TTLs included) and removes the new ones."
	}
	return "This import cannot be undone: " + j.UndoReason + ". Type the number of keys to confirm."
}
