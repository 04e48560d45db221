package handlers

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview/action"
)

// ErrUnknownTopic: a websocket topic nobody publishes (404).
var ErrUnknownTopic = errors.New("unknown topic")

// Topic is one live view a websocket can watch. Its String is its wire name,
// "kind:argument" (the ?topic= of /ws), which keys the hub's one poller per
// view; ParseTopic gives it back. Each kind is declared beside its page,
// and its argument is the page's own parameters, written and read by the
// page's codec in package route.
type Topic interface {
	String() string
	// Level is the lowest level that may watch the topic: fragments of some
	// modes carry controls (undo, remove) for the roles that may use them.
	Level() action.Level
	// source resolves the topic against the console: the factory of its
	// poller's Source, or why there is none (no such connection, a
	// sensitive key).
	source(a *App) (func() live.Source, error)
}

// readTopic is a topic whose level is who may see it, not who may use
// controls in it: it writes nothing, so a read-only console serves it.
type readTopic interface {
	Topic
	readOnly()
}

// mayWatch: a user of level may watch t. Topics whose fragments carry
// controls (undo, remove) are for the levels that may use them, and a
// read-only console shows none.
func (a *App) mayWatch(level action.Level, t Topic) bool {
	need := t.Level()
	if level < need {
		return false
	}
	_, read := t.(readTopic)
	return need == action.Viewer || read || !a.auth.ReadOnly
}

// topicKinds parse each kind's argument: the table of every topic.
var topicKinds = map[string]func(arg string) (Topic, error){
	keyKind:               parseKeyTopic,
	overviewKind:          parseOverviewTopic,
	dbStatsKind:           parseDBTopic,
	leaderboardsKind:      parseLeaderboardsTopic,
	leaderboardKind:       parseLeaderboardTopic,
	auditKind:             parseAuditTopic,
	keysKind:              parseKeysTopic,
	quotasKind:            parseQuotasTopic,
	gatewayKeyKind:        parseGatewayKeyTopic,
	vertiqueKind:          parseVertiqueTopic,
	vertiqueInventoryKind: parseVertiqueInventoryTopic,
	bansKind:              parseBansTopic,
	searchKind:            parseSearchTopic,
	limitsKind:            parseOpsTopic(limitsKind),
	locksKind:             parseOpsTopic(locksKind),
	userKind:              parseUserTopic,
	slowlogKind:           parseSlowlogTopic,
	latencyKind:           parseLatencyTopic,
	pubsubWatchKind:       parsePubSubWatchTopic,
	bulkKind:              parseBulkTopic,
}

// ParseTopic reads a topic's wire name.
func ParseTopic(name string) (Topic, error) {
	kind, arg, ok := strings.Cut(name, ":")
	parse := topicKinds[kind]
	if !ok || parse == nil {
		return nil, unknownTopic(name)
	}
	t, err := parse(arg)
	if err != nil {
		return nil, unknownTopic(name)
	}
	return t, nil
}

func unknownTopic(name string) error { return fmt.Errorf("%w %q", ErrUnknownTopic, name) }

// scanTopic is a topic whose poller scans (a search, a user page): its
// source draws from the connection's scan budget as the identity who
// started it. Everyone else watching the same topic shares its one scan.
type scanTopic interface {
	scanSource(a *App, who string) (func() live.Source, error)
}

// source resolves t, subscribed by who, to the factory of its poller's
// Source. Every source is wrapped so its frames are valid UTF-8.
func (a *App) source(t Topic, who string) (func() live.Source, error) {
	var f func() live.Source
	var err error
	if st, ok := t.(scanTopic); ok {
		f, err = st.scanSource(a, who)
	} else {
		f, err = t.source(a)
	}
	if err != nil {
		return nil, err
	}
	kind, _, _ := strings.Cut(t.String(), ":")
	return func() live.Source { return &validSource{src: f(), kind: kind, log: a.log} }, nil
}

// Topics of a page in more than one mode name it "kind:mode:query", where
// the query is the page's parameters (url.Values.Encode: canonical, and
// never a ':' unescaped).

func modeArg(mode string, q url.Values) string { return mode + ":" + q.Encode() }

// parseModeArg splits "mode:query"; a missing query is an empty one (a
// topic named "audit:undo" is authorised as the undo mode it parses to).
func parseModeArg(arg string, modes ...string) (string, url.Values, error) {
	mode, q, _ := strings.Cut(arg, ":")
	vals, err := url.ParseQuery(q)
	if err != nil {
		return "", nil, err
	}
	for _, m := range modes {
		if m == mode {
			return mode, vals, nil
		}
	}
	return "", nil, fmt.Errorf("mode %q", mode)
}
