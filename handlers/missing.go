package handlers

import (
	"errors"
	"fmt"
	"github.com/keydeck/keydeck/views/format"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
)

// ErrNoKey: the key a page names does not exist (any more) — 404.
var ErrNoKey = errors.New("no such key")

type noKey struct{ msg string }

func (e noKey) Error() string { return e.msg }
func (e noKey) Unwrap() error { return ErrNoKey }

// missingKey says which key is missing, and why it most likely is: a key of
// a family whose keys expire has probably expired while it was looked at.
// Its page links back to the database.
func missingKey(conn *redisview.Conn, db int, key, what string) error {
	name, cut := views.ShortName(key)
	if cut {
		name += "…"
	}
	msg := fmt.Sprintf("There is no %s “%s” in db%d of %s", what, name, db, conn.Name)
	var fam *schema.Family
	if cls := conn.Classifier(); cls != nil {
		fam, _ = cls.Classify(db, key)
	}
	switch {
	case fam != nil && fam.TTL.Kind == schema.TTLRequired:
		msg += fmt.Sprintf(": keys of %s expire (TTL %s), so it has most likely expired since the link to it was made.", fam.ID, format.TTLPolicy(fam.TTL))
	default:
		msg += ": it never existed, or it expired or was deleted since the link to it was made."
	}
	return withBack(noKey{msg}, route.DatabaseURL(conn.Name, db))
}
