package transfer

import (
	"context"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/bulk"
)

// KindImport is the bulk job kind of an import: each item is one line,
// its payload the line itself; the job writes the key as Queue does,
// inside the batch's MULTI, and the bulk engine records the prior state
// of each key so that undo restores what was overwritten and removes
// what was created.
const KindImport = "import"

func init() { bulk.Register(importKind{}) }

type importKind struct{}

func (importKind) Name() string  { return KindImport }
func (importKind) Title() string { return "Import" }

// Queue writes one line's key. The engine calls it only for a key still
// in the state the preview read (WATCHed), so a key changed since is
// skipped and reported, not overwritten.
func (importKind) Queue(ctx context.Context, tx redis.Pipeliner, _ bulk.Job, it bulk.Item, _ bulk.State, _ time.Time) string {
	r, err := ParseLine(it.Payload)
	if err != nil || string(r.Key) != it.Key {
		return "the stored line no longer reads as one of the format"
	}
	if err := Queue(ctx, tx, r); err != nil {
		return err.Error()
	}
	return ""
}

// Item is a line as a bulk job item.
func Item(r Record) (bulk.Item, error) {
	line, err := json.Marshal(r)
	if err != nil {
		return bulk.Item{}, err
	}
	return bulk.Item{Key: string(r.Key), Payload: line}, nil
}
