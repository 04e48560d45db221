package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview/action"
)

// errUnknownTopic is returned for a websocket topic nobody publishes.
var errUnknownTopic = errors.New("unknown topic")

// A topic name is "kind:argument", e.g. "overview:eisland". A kind resolves
// its argument to the factory of the topic's Source and the lowest role that
// may watch it (fragments of some modes carry controls for higher roles).
type topicKind func(arg string) (func() live.Source, action.Role, error)

type topics struct {
	kinds map[string]topicKind
	log   *slog.Logger
}

func newTopics(a *App) *topics {
	return &topics{log: a.log, kinds: map[string]topicKind{
		"overview":     a.overviewSource,
		"dbstats":      a.dbStatsSource,
		"audit":        a.auditSource,
		"lb":           a.lbSource,
		"leaderboards": a.lbListSource,
	}}
}

// source resolves a topic to the factory of its poller's Source and the
// role it requires. Every source is wrapped so its frames are valid UTF-8.
func (t *topics) source(topic string) (func() live.Source, action.Role, error) {
	kind, arg, ok := strings.Cut(topic, ":")
	if !ok {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, topic)
	}
	k, ok := t.kinds[kind]
	if !ok {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, topic)
	}
	f, role, err := k(arg)
	if err != nil {
		return nil, 0, err
	}
	return func() live.Source { return &validSource{src: f(), kind: kind, log: t.log} }, role, nil
}

func overviewTopic(conn string) string { return "overview:" + conn }

// overviewSource polls one connection's overview and renders its live fragment.
func (a *App) overviewSource(conn string) (func() live.Source, action.Role, error) {
	c, err := a.conns.Get(conn)
	if err != nil {
		return nil, 0, err
	}
	reader := a.overviews[c.Name]
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			c.EnsurePack(a.conns.Packs())
			vm := overviewVM(reader.Read(ctx), a.now())
			vm.Pack = packLine(c.PackChoice())
			return renderBytes(ctx, overviewFragment(vm))
		})
	}, action.Viewer, nil
}
