package handlers

import (
	"context"
	"errors"
	"fmt"
	"github.com/keydeck/keydeck/views/format"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/redisview/value"
)

// The API's reading operations. Each reads what its page reads (the same
// domain calls) and maps it with a pure function of internal/apiv1.

// apiRoutes is the API's operation table: path, level, handler.
//
// One more endpoint is three pieces: its path beside the others in
// internal/route/api.go; an input struct (path:"…" and query:"…" fields,
// flat: huma binds no embedded struct of this package; a name is read
// with apiQueryName for its _b64 twin) and an output struct {Body T} of an
// internal/apiv1 type; and a handler that reads what the page reads and
// maps it with apiv1's pure function, returning the domain's errors as
// they are (problem maps them with the pages' table):
//
//	type apiLocksIn struct {
//		Conn string `path:"conn" doc:"The connection's name."`
//	}
//	type apiLocksOut struct{ Body apiv1.Locks }
//
//	func (a *App) apiLocks(ctx context.Context, c echo.Context, in *apiLocksIn) (*apiLocksOut, error) {
//		conn, err := a.conns.Get(in.Conn)
//		if err != nil {
//			return nil, err
//		}
//		return &apiLocksOut{Body: apiv1.LocksOf(conn.Name, a.limits.Read(ctx, conn))}, nil
//	}
//
// then one line here: apiRouteOf(a, get, route.APILocks, "list-locks",
// "…", action.Viewer, notFound, a.apiLocks), and go test -run
// TestAPIOpenAPIGolden ./handlers/ -update, and a call of it in
// TestAPIResponsesMatchTheContract (which fails on an operation it does
// not exercise).
func (a *App) apiRoutes() []apiRoute {
	const get, post = http.MethodGet, http.MethodPost
	notFound := []int{http.StatusBadRequest, http.StatusNotFound, http.StatusBadGateway}
	acts := []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusBadGateway, http.StatusServiceUnavailable}
	return []apiRoute{
		apiRouteOf(a, get, route.APIConnections, "list-connections", "The connections and their state", action.Viewer, nil, a.apiConnections),
		apiRouteOf(a, get, route.APIBanCheck, "ban-check", "Is a name banned: the name against every ban list and filter", action.Viewer, notFound, a.apiBanCheck),
		apiRouteOf(a, get, route.APIUser, "get-user", "Everything about one user: keys, bans, leaderboard places", action.Viewer, notFound, a.apiUser),
		apiRouteOf(a, get, route.APIKey, "get-key", "One key: metadata, decoded state, a page of its value", action.Viewer, notFound, a.apiKey),
		apiRouteOf(a, get, route.APILeaderboard, "get-leaderboard", "A window of a leaderboard's entries", action.Viewer, notFound, a.apiLeaderboard),
		apiRouteOf(a, get, route.APILimits, "list-limits", "Rate limits: each family's most constrained rows, as the sweep holds them", action.Viewer, notFound, a.apiLimits),
		apiRouteOf(a, get, route.APILocks, "list-locks", "Locks: each lock family's held locks, as the sweep holds them", action.Viewer, notFound, a.apiLocks),
		apiRouteOf(a, get, route.APIQuotas, "list-quotas", "Quotas and budgets: each family's subjects, as the walk holds them", action.Viewer, notFound, a.apiQuotas),
		apiRouteOf(a, get, route.APIBans, "list-bans", "Ban lists: each bloom's health, its consistency with the set, a page of members", action.Viewer, notFound, a.apiBans),
		apiRouteOf(a, get, route.APIDBStats, "get-db-stats", "A database's statistics: families, domains, TTL health, violations, biggest keys", action.Viewer, notFound, a.apiDBStats),
		apiRouteOf(a, get, route.APIViolations, "list-violations", "Schema violations: every database's keys that break their family's rules (type, TTL), as the statistics sweeps found them", action.Viewer, notFound, a.apiViolations),
		apiRouteOf(a, get, route.APIAudit, "list-audit", "The audit log: a page of records, newest first", action.Viewer, []int{http.StatusBadRequest, http.StatusBadGateway, http.StatusServiceUnavailable}, a.apiAudit),
		apiRouteOf(a, get, route.APIOverview, "get-overview", "A connection's overview: server figures, keyspace, recent history", action.Viewer, notFound, a.apiOverview),
		apiRouteOf(a, get, route.APIKeys, "list-keys", "A page of keys: a family's, or those under a prefix (a bounded SCAN walk)", action.Viewer, notFound, a.apiKeys),
		apiRouteOf(a, get, route.APISearch, "search", "Search: keys derived from a value, a family's key lists, or a glob (one bounded request of scans)", action.Viewer, notFound, a.apiSearch),
		apiRouteOf(a, get, route.APIGatewayKey, "get-gateway-key", "One LLM gateway API key: its quotas, budgets, reservations and breaker hints", action.Viewer, notFound, a.apiGatewayKey),
		apiRouteOf(a, get, route.APIVertique, "get-vertique", "vertique's Bucket4j buckets: the inventory by secret generation", action.Viewer, notFound, a.apiVertique),
		apiRouteOf(a, get, route.APIVertiqueBkt, "find-vertique-bucket", "Find a caller's vertique bucket: its key derived with the secret, and its state", action.Support, append(notFound, http.StatusConflict), a.apiVertiqueFind),
		writes(apiRouteOf(a, post, route.APIPreview, "preview-action", "Preview an action: what will change, and its confirmation token", action.Support, acts, a.apiPreview)),
		writes(apiRouteOf(a, post, route.APIExecute, "execute-action", "Execute a previewed action (its token), audited", action.Support, acts, a.apiExecute)),
		writes(apiRouteOf(a, post, route.APIUndo, "undo-action", "Preview undoing an executed action (its audit record): execute confirms it", action.Support, acts, a.apiUndo)),
	}
}

// writes marks an operation that changes Redis: refused on a console
// that does not act (read-only, no runner).
func writes(r apiRoute) apiRoute { r.write = true; return r }

type apiConnectionsOut struct {
	Body apiv1.List[apiv1.Connection]
}

func (a *App) apiConnections(ctx context.Context, _ echo.Context, _ *struct{}) (*apiConnectionsOut, error) {
	conns := a.conns.All()
	items := make([]apiv1.Connection, len(conns))
	ctx, cancel := context.WithTimeout(ctx, homeRead)
	defer cancel()
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Go(func() { items[i] = a.apiConnection(ctx, conn) })
	}
	wg.Wait()
	return &apiConnectionsOut{Body: apiv1.List[apiv1.Connection]{Items: items}}, nil
}

// apiConnection reads what the connections page reads of one.
func (a *App) apiConnection(ctx context.Context, conn *redisview.Conn) apiv1.Connection {
	st := conn.Status()
	pack := ""
	if p := conn.PackChoice().Pack; p != nil {
		pack = p.Name
	}
	r := a.overviews[conn.Name]
	if (!st.Up && !st.Checked.IsZero()) || r == nil {
		return apiv1.ConnectionOf(conn.Name, conn.Display, st, pack, stats.Overview{}, false)
	}
	return apiv1.ConnectionOf(conn.Name, conn.Display, st, pack, r.Latest(ctx, 3*time.Second), true)
}

// apiQueryName reads a name the query gives as param or param_b64 (the
// input structs' fields document them; huma binds no embedded struct of
// this package): the bytes as sent.
func apiQueryName(c echo.Context, param string, max int) (string, error) {
	q := c.QueryParams()
	return route.APIName(param, q.Get(param), q.Has(param), q.Get(param+"_b64"), q.Has(param+"_b64"), max)
}

type apiBanCheckIn struct {
	Conn    string `path:"conn" doc:"The connection's name."`
	Name    string `query:"name" doc:"The name, percent-encoded: any bytes."`
	NameB64 string `query:"name_b64" doc:"The name's bytes in base64 (standard or URL-safe, padded or not), instead of name."`
}

type apiBanCheckOut struct{ Body apiv1.BanCheck }

// apiBanCheck reads every list as the Bans page does (bans.ReadPage, the
// name as its check).
func (a *App) apiBanCheck(ctx context.Context, c echo.Context, in *apiBanCheckIn) (*apiBanCheckOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	name, err := apiQueryName(c, "name", route.MaxCheckName)
	if err != nil {
		return nil, err
	}
	var reads []bans.ListRead
	for _, l := range bans.Lists(conn) {
		reads = append(reads, bans.ReadPage(ctx, conn, l, bans.PageQuery{Check: name, Pages: bansPagePages}, a.now()))
	}
	return &apiBanCheckOut{Body: apiv1.BanCheckOf(conn.Name, name, reads, a.apiErrText(conn))}, nil
}

// apiErrText words a read error as the pages do: the connection's state
// first when it is down.
func (a *App) apiErrText(conn *redisview.Conn) func(error) string {
	return func(err error) string {
		msg := "not read"
		if err != nil {
			msg = conn.SafeErr(err)
		}
		if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
			msg = conn.Name + " is " + statusText(st) + ": " + msg
		}
		return msg
	}
}

type apiUserIn struct {
	Conn    string `path:"conn" doc:"The connection's name."`
	Name    string `query:"name" doc:"The username, percent-encoded: any bytes."`
	NameB64 string `query:"name_b64" doc:"The username's bytes in base64 (standard or URL-safe, padded or not), instead of name."`
	Email   string `query:"email" doc:"The user's e-mail address, when known: keys by e-mail are derived from it."`
}

type apiUserOut struct{ Body apiv1.User }

// apiUser reads the user view once, as the user page's first read does
// (search.ReadUserPage, the connection's scan budget drawn as the caller).
func (a *App) apiUser(ctx context.Context, c echo.Context, in *apiUserIn) (*apiUserOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	name, err := apiQueryName(c, "name", route.MaxCheckName)
	if err != nil {
		return nil, err
	}
	if len(in.Email) > search.MaxQuery {
		return nil, fmt.Errorf("%w: the e-mail address is too long", route.ErrParam)
	}
	pack := conn.Pack()
	if pack == nil {
		return nil, fmt.Errorf("%w: %s has no schema pack (not chosen yet or none fits), so no key can be derived from a username", redisview.ErrRead, conn.Name)
	}
	q := search.UserQuery{Subject: search.Subject{Name: name, Email: in.Email}}
	if in.Email != "" {
		q.Subject.EmailFrom = "given"
	}
	if refs, _, err := a.lbIndex.Refs(conn, userBoardWait); err == nil {
		for _, r := range refs {
			q.Boards = append(q.Boards, search.Board{DB: r.DB, Key: r.Key, Family: r.Family})
		}
	}
	(&search.UserState{}).Plan(&q, a.now(), userCadence)
	lim := userLimits
	who := identity(c).Holder()
	lim.Budget = a.scanTap(conn.Name, who)
	page, err := search.ReadUserPage(ctx, conn, q, lim, a.now())
	if err != nil {
		return nil, err
	}
	u := apiv1.UserOf(conn.Name, pack.Name, page, a.apiErrText(conn))
	// Each key offers the action the user page links on it (userFix).
	if a.userSupport(actor(c).Level) {
		for i, h := range page.Hits {
			if h.Family == nil || i >= len(u.Keys) || a.actions.Protected(h.Key) {
				continue
			}
			locked := i < len(page.Keys) && page.Keys[i].Locked
			for _, av := range a.userKeyActions(conn.Name, h.DB, h.Key, userFix(h.Family, locked)) {
				if k, ok := a.actionKind(av.Kind); ok {
					u.Keys[i].Actions = append(u.Keys[i].Actions, apiKeyAction(k))
				}
			}
		}
	}
	return &apiUserOut{Body: u}, nil
}

type apiKeyPageIn struct {
	Conn      string `path:"conn" doc:"The connection's name."`
	N         string `path:"n" doc:"The database index, 0 to 255."`
	Key       string `query:"key" doc:"The key, percent-encoded: any bytes."`
	KeyB64    string `query:"key_b64" doc:"The key's bytes in base64 (standard or URL-safe, padded or not), instead of key."`
	At        string `query:"at" doc:"Where the value's page starts: the next of the previous page."`
	Filter    string `query:"q" doc:"Keep the hash fields and set members containing this text (not a pattern)."`
	Order     string `query:"order" enum:"asc,desc" doc:"A stream's order: asc (oldest first, the default) or desc."`
	Min       string `query:"min" doc:"A sorted set's score window: the lowest score (a number, -inf, or ( before it for exclusive)."`
	Max       string `query:"max" doc:"A sorted set's score window: the highest score."`
	Member    string `query:"member" doc:"A sorted set's member to look up (its score and rank), percent-encoded: any bytes."`
	MemberB64 string `query:"member_b64" doc:"The member's bytes in base64, instead of member."`
}

type apiKeyOut struct{ Body apiv1.Key }

// apiKeyAction is a kind of action as the API offers it.
func apiKeyAction(kd action.Kind) apiv1.KeyAction {
	ka := apiv1.KeyAction{Kind: kd.Name(), Title: kd.Title(), Requires: kd.Requires().String(), Args: []apiv1.ActionArg{}}
	for _, arg := range kd.Args() {
		ka.Args = append(ka.Args, apiv1.ActionArg{Name: arg.Name, Help: arg.Help})
	}
	return ka
}

// apiKey reads what the key page reads: the key's metadata
// (stats.InspectKey), a page of its value (value.Read) and its role's
// reading (decode.ReadKey), never of a sensitive family.
func (a *App) apiKey(ctx context.Context, c echo.Context, in *apiKeyPageIn) (*apiKeyOut, error) {
	conn, db, err := a.openDB(ctx, in.Conn, in.N)
	if err != nil {
		return nil, err
	}
	key, err := apiQueryName(c, "key", route.MaxKey)
	if err != nil {
		return nil, err
	}
	q := c.QueryParams()
	win := map[string][]string{"at": {in.At}, "q": {in.Filter}, "order": {in.Order}, "min": {in.Min}, "max": {in.Max}}
	var member string
	if q.Has("member") || q.Has("member_b64") {
		if member, err = apiQueryName(c, "member", route.MaxKey); err != nil {
			return nil, err
		}
	}
	at, err := route.ParseValue(win)
	if err != nil {
		return nil, err
	}
	info, memNote, err := stats.InspectKey(ctx, conn, db, key)
	if err != nil {
		return nil, fmt.Errorf("this key could not be read, so whether it exists is unknown. %w", err)
	}
	if info.Type == "" {
		return nil, missingKey(conn, db, key, "key")
	}
	pg, err := value.Read(ctx, conn, db, key, value.Request{Type: info.Type, At: at.At, Filter: at.Filter, Desc: at.Desc, Min: at.Min, Max: at.Max})
	if errors.Is(err, value.ErrCursor) {
		return nil, fmt.Errorf("%w: %s", route.ErrParam, err.Error())
	}
	k := apiv1.KeyOf(conn.Name, db, info, memNote, pg, err)
	var fam *schema.Family
	if cls := conn.Classifier(); cls != nil {
		if m, ok := cls.Match(db, key); ok {
			f := m.Family
			fam = f
			id, role := f.ID, string(f.Role)
			k.Family, k.Role, k.Sensitive = &id, &role, f.Sensitive
			k.NameParts = apiv1.NamePartsOf(schema.NameParts(m))
			for _, v := range []string{f.TypeViolation(info.Type), format.TTLViolation(f.TTL.Violation(info.TTL))} {
				if v != "" {
					k.Violations = append(k.Violations, v)
				}
			}
			k.Decoded = a.apiDecode(ctx, conn, db, key, info.Type, m)
		}
	}
	kinds, note := a.keyActions(actor(c), key, fam, info.Type)
	for _, kd := range kinds {
		k.Actions = append(k.Actions, apiKeyAction(kd))
	}
	k.ActionsNote = note
	if member != "" {
		if info.Type != "zset" {
			return nil, fmt.Errorf("%w: member looks a member up in a sorted set; this key is a %s", route.ErrParam, info.Type)
		}
		m, err := value.Lookup(ctx, conn, db, key, member)
		k.Lookup = apiv1.LookupOf(member, m, err)
	}
	return &apiKeyOut{Body: k}, nil
}
