package handlers

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/scanbudget"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

const userKind = "user"

// UserTopic is one user page, live: "user:MODE:<query>", MODE support
// (fixing actions linked; support may watch) or viewer.
type UserTopic struct {
	Conn    string
	Name    string
	Email   string // given with the name; "" to find it
	Support bool
}

func (t UserTopic) String() string {
	mode := "viewer"
	if t.Support {
		mode = "support"
	}
	q := url.Values{"conn": {t.Conn}, "name": {t.Name}}
	if t.Email != "" {
		q.Set("email", t.Email)
	}
	return userKind + ":" + modeArg(mode, q)
}

// Level: the support mode's fragment carries action links.
func (t UserTopic) Level() action.Level {
	if t.Support {
		return action.Support
	}
	return action.Viewer
}

func parseUserTopic(arg string) (Topic, error) {
	mode, q, err := parseModeArg(arg, "viewer", "support")
	if err != nil {
		return nil, err
	}
	name, email := q.Get("name"), q.Get("email")
	if name == "" || len(name)+len(email) > route.MaxLinkedName || !redisview.ValidName(q.Get("conn")) {
		return nil, ErrUnknownTopic
	}
	return UserTopic{Conn: q.Get("conn"), Name: name, Email: email, Support: mode == "support"}, nil
}

func (t UserTopic) source(a *App) (func() live.Source, error) { return t.scanSource(a, "") }

// scanSource: the page's scans draw from the scan budget as who, the
// identity that started the topic.
func (t UserTopic) scanSource(a *App, who string) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	return func() live.Source {
		s := &userSource{a: a, conn: conn, t: t, who: who, pacer: a.scanPacer(conn.Name, who)}
		if a.userStates != nil {
			s.st = a.userStates.Take(t.String())
		}
		if s.pacer != nil {
			s.budget = s.pacer
		}
		return s
	}, nil
}

// userSource re-reads the user's keys every tick; it scans again at most
// every userCadence.Rescan, continuing where the last scan stopped.
type userSource struct {
	a    *App
	conn *redisview.Conn
	t    UserTopic
	who  string // whose scan budget its scans draw from
	// pacer keeps the page's place in the budget's queue between polls
	// (budget is it, or nil without a budget).
	pacer  *scanbudget.Pacer
	budget search.Budget

	mu     sync.Mutex
	st     search.UserState
	last   *views.UserLiveVM
	lastAt time.Time
}

// Close gives up the page's place in the budget's queue.
func (s *userSource) Close() error {
	s.pacer.Close()
	return nil
}

func (s *userSource) Poll(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vm, err := s.a.userRead(ctx, s.conn, s.t, &s.st, s.who, s.budget)
	if err != nil {
		why := "Could not be read: " + err.Error()
		if st := s.conn.Status(); !st.Up && !st.Checked.IsZero() {
			why = "Redis is unreachable — " + statusText(st) + "."
		}
		if s.last == nil {
			vm = views.UserLiveVM{Disconnected: why + " Nothing about this user has been read yet.", Support: s.t.Support}
		} else {
			vm = *s.last
			vm.Disconnected = why + " The figures below are from " + format.Clock(s.lastAt) + "."
		}
	} else {
		s.last, s.lastAt = &vm, s.a.now()
	}
	return renderBytes(ctx, views.UserLive(vm, true))
}
