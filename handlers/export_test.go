package handlers

import (
	"context"
	"slices"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview/action"
)

// rawTopic ("raw:ARG") publishes ARG followed by bytes that are not UTF-8,
// however a fragment could come to hold them: the websocket must still
// send valid UTF-8. Registered for tests only.
type rawTopic struct{ arg string }

func (t rawTopic) String() string    { return "raw:" + t.arg }
func (rawTopic) Level() action.Level { return action.Viewer }

func (t rawTopic) source(*App) (func() live.Source, error) {
	return func() live.Source {
		return live.SourceFunc(func(context.Context) ([]byte, error) { return []byte("<p>" + t.arg + "\xff\xfe</p>"), nil })
	}, nil
}

func init() {
	topicKinds["raw"] = func(arg string) (Topic, error) { return rawTopic{arg}, nil }
}

// Internals the black-box tests (package handlers_test) check against.
const (
	SessionCookie    = sessionCookie
	CSRFCookie       = csrfCookie
	WSMaxTopics      = wsMaxTopics
	MaxLiveTopics    = maxLiveTopics
	MaxTopicsPerUser = maxTopicsPerUser
	MaxConnsPerUser  = maxConnsPerUser
)

// TopicKinds are the kinds of the topic registry (the test-only "raw"
// left out), so that a crawl can tell a kind it did not watch.
func TopicKinds() []string {
	var out []string
	for k := range topicKinds {
		if k != "raw" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
