package transfer_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/transfer"
)

// An import as an admin runs it: the preview classes every line (new,
// overwritten with its current size, identical, Keydeck's own), the job
// on the bulk engine writes the new and overwritten keys (byte-identical
// to the source, TTLs within a second) and leaves the rest alone, and its
// undo restores the overwritten keys and removes the new ones.
func TestImportJobAndUndo(t *testing.T) {
	ctx := context.Background()
	src, dst, aud := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	a, b := src.Client(0), dst.Client(0)
	seedEveryType(t, a)
	b.Set(ctx, "plain", "hello", 0)                  // identical
	b.HSet(ctx, "hash:big", "other", "value")        // overwritten
	b.Set(ctx, "list", "was a string", time.Hour)    // overwritten, another type
	b.Set(ctx, "untouched", "not in the file", 0)    // not in the file
	a.Set(ctx, "keydeck:session-secret", "never", 0) // Keydeck's own: never written
	before := map[string]string{}
	for _, k := range keysOf(t, b) {
		before[k], _ = typed(t, b, k)
	}

	conn, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: dst.URL(0)}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	runner := action.New(aud.Client(15), action.Options{})
	exported := time.Now()
	file := exportAll(t, a, transfer.DefaultReadLimits, nil)
	recs, err := transfer.ReadAll(bytes.NewReader(file), transfer.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	pv, err := transfer.PreviewImport(ctx, conn, 0, recs, runner.Protected, nil)
	if err != nil {
		t.Fatal(err)
	}
	nkeys := len(recs)
	want := map[transfer.Class]int{transfer.Identical: 1, transfer.Overwritten: 2, transfer.Protected: 1, transfer.New: nkeys - 4}
	for c, n := range want {
		if pv.Count[c] != n {
			t.Errorf("%s: %d, want %d (%v)", c, pv.Count[c], n, pv.Count)
		}
	}
	for _, l := range pv.Lines {
		if string(l.Record.Key) == "list" && (l.Verdict.Current.Type != "string" || l.Verdict.Current.Bytes != int64(len("was a string"))) {
			t.Errorf("overwritten list: current %+v", l.Verdict.Current)
		}
	}

	eng := bulk.New(bulk.Options{Audit: aud.Client(15), Runner: runner,
		Conns: func(string) (*redisview.Conn, error) { return conn, nil }})
	t.Cleanup(eng.Close)
	admin := action.Actor{User: "ada", Level: action.Admin}
	var items []bulk.Item
	for _, r := range pv.Writes() {
		it, err := transfer.Item(r)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	j, err := eng.Prepare(ctx, admin, conn, bulk.Spec{Kind: transfer.KindImport, Sel: bulk.Selection{DB: 0, Label: "test.jsonl"}}, items)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Start(ctx, admin, j.ID, j.Count); err != nil {
		t.Fatal(err)
	}
	if j = finished(t, eng, j.ID); j.Status != bulk.Done || j.Acted != int64(len(items)) {
		t.Fatalf("import job: %+v", j)
	}
	b.Del(ctx, "untouched")
	a.Del(ctx, "keydeck:session-secret")
	sameDatabases(t, a, b, exported)

	u, err := eng.Undo(ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Start(ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	if u = finished(t, eng, u.ID); u.Status != bulk.Done || u.Skipped() != 0 {
		t.Fatalf("undo: %+v", u)
	}
	b.Set(ctx, "untouched", "not in the file", 0)
	after := map[string]string{}
	for _, k := range keysOf(t, b) {
		after[k], _ = typed(t, b, k)
	}
	if len(after) != len(before) {
		t.Errorf("after the undo %d keys, before the import %d", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%q after the undo: %s, before: %s", k, after[k], v)
		}
	}
	if ttl := b.PTTL(ctx, "list").Val(); ttl < 59*time.Minute {
		t.Errorf("overwritten key's TTL after the undo: %v", ttl)
	}
}

func finished(t *testing.T, e *bulk.Engine, id string) bulk.Job {
	t.Helper()
	var j bulk.Job
	redistest.Eventually(t, 30*time.Second, "the job", func() bool {
		var err error
		if j, err = e.Job(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return j.Status == bulk.Done || j.Status == bulk.Failed || j.Status == bulk.Cancelled
	})
	return j
}
