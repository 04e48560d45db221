package handlers

import (
	"context"
	"io"
	"log/slog"
	"unicode/utf8"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/views"
)

// keyHref links a key's page, or is "" when the name is longer than a link
// may carry (views.MaxLinkedName): the view then shows it unlinked.
func keyHref(conn string, db int, key string) string {
	if !views.Linkable(key) {
		return ""
	}
	return route.KeyURL(conn, db, key)
}

// validUTF8 returns b, or a copy with every byte that is not UTF-8 shown as
// \xNN, and whether it had to. Views show Redis names through
// views.EscapeName, so this is the net under a view that forgot: a browser
// refuses a websocket text frame that is not UTF-8 (Chromium drops it and
// the view stops updating) and shows U+FFFD for such bytes in a page.
func validUTF8(b []byte) ([]byte, bool) {
	if utf8.Valid(b) {
		return b, false
	}
	return []byte(views.ValidText(string(b))), true
}

// validSource makes every frame of a topic valid UTF-8 (see validUTF8). It
// wraps each topic's source where topics are resolved, the one path by
// which fragments reach the hub, so no kind of topic can send an invalid
// text frame.
type validSource struct {
	src    live.Source
	kind   string // the topic's kind; its argument may hold a key name, which logs must not
	log    *slog.Logger
	warned bool // Poll runs on the topic's poller goroutine only
}

func (s *validSource) Poll(ctx context.Context) ([]byte, error) {
	b, err := s.src.Poll(ctx)
	if err != nil {
		return nil, err
	}
	out, fixed := validUTF8(b)
	if fixed && !s.warned {
		s.warned = true
		s.log.Warn("live fragment had bytes that are not UTF-8; escaped them (a view shows a Redis name without views.Name)", "topic_kind", s.kind)
	}
	return out, nil
}

// Close passes the hub's close on: sources hold sweepers and watch entries.
func (s *validSource) Close() error {
	if c, ok := s.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
