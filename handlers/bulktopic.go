package handlers

import (
	"context"
	"net/url"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
)

const bulkKind = "bulk"

// BulkTopic is one bulk job's page, live: "bulk:as=STATUS&conn=NAME&id=ID".
// As is the state the page was drawn in: when the job moves on, the
// fragment links to the page drawn afresh (its controls change).
type BulkTopic struct{ Conn, ID, As string }

func (t BulkTopic) String() string {
	return bulkKind + ":" + url.Values{"conn": {t.Conn}, "id": {t.ID}, "as": {t.As}}.Encode()
}

// Level: a job's page is for admins, who run jobs.
func (BulkTopic) Level() action.Level { return action.Admin }

func (BulkTopic) readOnly() {}

func parseBulkTopic(arg string) (Topic, error) {
	q, err := url.ParseQuery(arg)
	if err != nil || q.Get("conn") == "" || q.Get("id") == "" {
		return nil, ErrUnknownTopic
	}
	return BulkTopic{Conn: q.Get("conn"), ID: q.Get("id"), As: q.Get("as")}, nil
}

// source reads the job's state from the audit Redis each tick.
func (t BulkTopic) source(a *App) (func() live.Source, error) {
	if a.bulk == nil {
		return nil, ErrUnknownTopic
	}
	if _, err := a.conns.Get(t.Conn); err != nil {
		return nil, err
	}
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			j, err := a.bulk.Job(ctx, t.ID)
			if err != nil || j.Spec.Sel.Conn != t.Conn {
				vm := views.BulkLiveVM{Status: "unknown", StatusText: "The job's state could not be read from the audit Redis."}
				return renderBytes(ctx, views.BulkLive(vm, true))
			}
			return renderBytes(ctx, views.BulkLive(bulkLiveVM(j, a.bulk.Options(), t.As), true))
		})
	}, nil
}
