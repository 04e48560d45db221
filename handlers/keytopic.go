package handlers

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

const keyKind = "key"

// KeyTopic is one key's page, live: "key:plain:<query>", the query holding
// the connection, database, key and value window (route.Value) the page
// shows, so a pushed fragment is the page's own. Only names a link may
// carry (route.MaxLinkedName) have a topic: the name travels in the
// websocket's address, and a 64 KiB name would make an 87 KiB one.
type KeyTopic struct {
	Conn  string
	DB    int
	Key   string
	Value route.Value
}

// keyLiveNote is what the page says when a name is too long for a topic.
var keyLiveNote = fmt.Sprintf("Live updates are off for names over %d KiB: the websocket's address would carry the whole name. Reload to see changes.",
	route.MaxLinkedName>>10)

func (t KeyTopic) String() string {
	q := url.Values{"conn": {t.Conn}, "db": {strconv.Itoa(t.DB)}, "k": {t.Key}}
	t.Value.AddTo(q)
	return keyKind + ":" + modeArg("plain", q)
}

// Level: the fragment carries no controls (the actions stay on the page).
func (KeyTopic) Level() action.Level { return action.Viewer }

func parseKeyTopic(arg string) (Topic, error) {
	_, q, err := parseModeArg(arg, "plain")
	if err != nil {
		return nil, err
	}
	db, err := route.ParseDB(q.Get("db"))
	if err != nil {
		return nil, err
	}
	key, err := route.ParseKey(q)
	if err != nil || !route.Linkable(key) || !redisview.ValidName(q.Get("conn")) {
		return nil, ErrUnknownTopic
	}
	v, err := route.ParseValue(q)
	if err != nil {
		return nil, err
	}
	return KeyTopic{Conn: q.Get("conn"), DB: db, Key: key, Value: v}, nil
}

// source re-reads what the key page shows, every tick and on keyspace
// notifications about the key.
func (t KeyTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	topic := t.String()
	return func() live.Source {
		a.keyWatch.Add(conn.Name, t.DB, t.Key, topic)
		return &keySource{a: a, conn: conn, t: t, close: func() { a.keyWatch.Remove(conn.Name, t.DB, t.Key, topic) }}
	}, nil
}

// keySource is one key topic's poller. It remembers the last figures it
// read, so a Redis that goes away leaves them on screen, labelled, and
// when it first saw the key gone.
type keySource struct {
	a     *App
	conn  *redisview.Conn
	t     KeyTopic
	close func()

	mu     sync.Mutex
	last   *views.KeyVM // the last key read that found the key
	lastAt time.Time
	goneAt time.Time // zero while the key exists
}

func (s *keySource) Poll(ctx context.Context) ([]byte, error) {
	vm := s.vm(ctx)
	return renderBytes(ctx, views.KeyLive(vm, true))
}

func (s *keySource) vm(ctx context.Context) views.KeyVM {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.a.now()
	kv, err := s.a.keyView(ctx, s.conn, s.t.DB, s.t.Key, s.t.Value)
	switch {
	case err != nil:
		why := "The key could not be read: " + err.Error()
		if st := s.conn.Status(); !st.Up && !st.Checked.IsZero() {
			why = "Redis is unreachable — " + statusText(st) + "."
		}
		if s.last == nil {
			vm := keyBase(s.conn, s.t.DB, s.t.Key)
			vm.Exists = true // not known: nothing is claimed about the key
			vm.Disconnected = why + " Nothing about this key has been read yet."
			vm.Unknown = true
			return vm
		}
		vm := *s.last
		vm.Disconnected = why + " The figures below are from " + format.Clock(s.lastAt) + "."
		return vm
	case !kv.vm.Exists:
		if s.goneAt.IsZero() {
			s.goneAt = now
		}
		kv.vm.Gone = "This key no longer exists — deleted or expired, as of " + format.Clock(s.goneAt) + "."
		return kv.vm
	}
	s.goneAt = time.Time{}
	s.last, s.lastAt = &kv.vm, now
	return kv.vm
}

func (s *keySource) Close() error { s.close(); return nil }

// keyView is what the key page and its topic show of a key: one function,
// so the page and the pushes are one view. The error is a read that
// failed (whether the key exists is then unknown) or a malformed value
// position; a missing key is vm.Exists false.
type keyView struct {
	vm  views.KeyVM
	fam *schema.Family
}

func keyBase(conn *redisview.Conn, db int, key string) views.KeyVM {
	vm := views.KeyVM{Conn: conn.Name, DB: db, Key: key, Back: route.DatabaseURL(conn.Name, db),
		TTL: "none", Memory: "n/a", Size: "n/a", Family: "no family", Role: "—"}
	if cls := conn.Classifier(); cls != nil {
		if m, ok := cls.Match(db, key); ok {
			vm.Family, vm.Role, vm.Domain, vm.Sensitive = m.Family.ID, string(m.Family.Role), m.Family.Domain, m.Family.Sensitive
			vm.Pattern = m.Family.Pattern.String()
			for _, p := range schema.NameParts(m) {
				vm.NameParts = append(vm.NameParts, views.NamePartRow{Name: p.Name, Class: p.Class, Raw: p.Raw, Meaning: p.Meaning, How: p.How})
			}
		}
	}
	return vm
}

func (a *App) keyView(ctx context.Context, conn *redisview.Conn, db int, key string, valueAt route.Value) (keyView, error) {
	info, memWhy, err := stats.InspectKey(ctx, conn, db, key)
	if err != nil {
		return keyView{}, err
	}
	vm := keyBase(conn, db, key)
	vm.Exists = info.Type != ""
	if !vm.Exists {
		return keyView{vm: vm}, nil
	}
	vm.Type = info.Type
	if info.TTL >= 0 {
		vm.TTL = format.TTL(info.TTL)
	}
	if info.Memory >= 0 && info.MemoryEstimated {
		// MEMORY USAGE would walk a big hash table: sampled instead.
		vm.Memory = "≈ " + format.Bytes(info.Memory) + " (estimated)"
	} else if info.Memory >= 0 {
		vm.Memory = format.Bytes(info.Memory)
	} else if memWhy != "" {
		vm.Memory = "n/a (" + memWhy + ")"
	}
	if info.Elements >= 0 {
		vm.Size = format.Size(info.Elements, info.Type)
	}
	if vm.Value, err = keyValue(ctx, conn, db, key, info.Type, valueAt); err != nil {
		return keyView{}, err
	}
	if info.Type == "stream" {
		vm.Groups = a.streamGroups(ctx, conn, db, key)
	}
	var fam *schema.Family
	if cls := conn.Classifier(); cls != nil {
		if m, ok := cls.Match(db, key); ok {
			fam = m.Family
			vm.Decoded = keyDecoded(ctx, conn, db, key, info.Type, m, a.now())
			if v := fam.TypeViolation(info.Type); v != "" {
				vm.Violations = append(vm.Violations, v)
			}
			if v := format.TTLViolation(fam.TTL.Violation(info.TTL)); v != "" {
				vm.Violations = append(vm.Violations, v)
			}
		}
	}
	return keyView{vm: vm, fam: fam}, nil
}
