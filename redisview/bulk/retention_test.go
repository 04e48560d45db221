package bulk_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
)

// ttlOf is the TTL of one of a job's records in the audit Redis.
func (f *fixture) ttlOf(id, part string) time.Duration {
	k := "keydeck:bulk:job:" + id
	if part != "" {
		k += ":" + part
	}
	return f.audit.TTL(f.ctx, k).Val()
}

// A preview's records (items included) stay PreviewTTL in the audit
// Redis, a started job's 400 days; a count past MaxKeys stops, says so,
// and keeps no items.
func TestPreviewRecordsShortLivedAndCountCapped(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fill("tmp:", 120, time.Time{})
	e := f.engine(bulk.Options{PreviewTTL: 10 * time.Minute, MaxKeys: 100, Rate: 1_000_000})
	j := f.counted(e, family("tmp"))
	if j.Status != bulk.Failed || !strings.Contains(j.Error, "more than 100 keys") || f.audit.Exists(f.ctx, "keydeck:bulk:job:"+j.ID+":items").Val() != 0 {
		t.Fatalf("a count past the cap: %+v", j)
	}

	e = f.engine(bulk.Options{PreviewTTL: 10 * time.Minute, Rate: 1_000_000})
	j = f.counted(e, family("tmp"))
	if j.Count != 120 || j.ItemBytes < 120*20 {
		t.Fatalf("count: %+v", j)
	}
	for _, part := range []string{"", "items"} {
		if d := f.ttlOf(j.ID, part); d <= 0 || d > 10*time.Minute {
			t.Fatalf("a preview's %q kept %v", part, d)
		}
	}
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	for _, part := range []string{"", "items", "priors"} {
		if d := f.ttlOf(j.ID, part); d < 300*24*time.Hour {
			t.Fatalf("a started job's %q kept %v", part, d)
		}
	}

	c := f.counted(e, family("tmp"))
	if err := e.Cancel(f.ctx, admin, c.ID); err != nil {
		t.Fatal(err)
	}
	if d := f.ttlOf(c.ID, ""); d <= 0 || d > 10*time.Minute {
		t.Fatalf("a preview cancelled kept %v", d)
	}
}

// Items of a sensitive family are not prepared (their payload, a value,
// would be stored); a prepared job's payloads are kept PreviewTTL until
// it starts.
func TestPrepareRefusesSensitiveAndKeepsPayloadsShort(t *testing.T) {
	t.Parallel()
	f := setup(t)
	e := f.engine(bulk.Options{PreviewTTL: 10 * time.Minute})
	spec := bulk.Spec{Kind: "test-write", Sel: bulk.Selection{DB: 0, Label: "a file"}}
	_, err := e.Prepare(f.ctx, admin, f.conn, spec, []bulk.Item{{Key: "new:1", Payload: []byte("v")}, {Key: "sec:1", Payload: []byte("secret")}})
	if !errors.Is(err, action.ErrInvalid) || !strings.Contains(err.Error(), `"sec:1"`) {
		t.Fatalf("a sensitive item: %v", err)
	}
	j, err := e.Prepare(f.ctx, admin, f.conn, spec, []bulk.Item{{Key: "new:1", Payload: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	if d := f.ttlOf(j.ID, "items"); d <= 0 || d > 10*time.Minute {
		t.Fatalf("prepared payloads kept %v", d)
	}
}
