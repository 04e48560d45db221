package handlers_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	cmdconsole "github.com/keydeck/keydeck/redisview/console"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// The marker planted in the value of every key of every family: in a
// string, a hash field's name and value, a set, list or sorted-set member,
// a stream entry; and the score the crawl's user has on every sorted set.
const (
	sensMarker = "QZXMARK"
	sensOpen   = "QZXOPEN" // in the keys of families not sensitive
	sensUser   = "crawl-user"
	sensScore  = 91827.375
)

// sensLeaks are the forms a marker could take in an output.
var sensLeaks = []string{sensMarker, hex.EncodeToString([]byte(sensMarker)), strings.ToUpper(hex.EncodeToString([]byte(sensMarker))), "827.375", "827,375"}

// sensKey is a key the crawl planted a marker in.
type sensKey struct {
	Conn   string
	DB     int
	Key    string
	Type   string
	Family *schema.Family
	Vars   []schema.Var
}

// With every family of every pack marked sensitive and markers planted in
// the values of their keys (the demo's seeds, on real redis-servers), no
// page, JSON answer or websocket frame shows a marker: every GET route of
// the route table is opened (with examples given here, then every link
// the pages offer, as an admin sees them), and every kind of the topic
// registry is watched (the topics the pages connect to, and examples given
// here). A route or topic kind without an example fails the test, so a
// new page or topic cannot be left out.
//
// Then the same with every other family sensitive (by their order in the
// pack, both halves): a view of a family that is shown must not show a
// sensitive family it reads beside it. The keys of families shown hold a
// marker of their own (sensOpen), which may appear.
func TestSensitiveMarkersAppearNowhere(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crawls every page and topic")
	}
	for _, tt := range []struct {
		name string
		mark func(p *schema.Pack, f *schema.Family) bool
	}{
		{"every family", func(*schema.Pack, *schema.Family) bool { return true }},
		{"even families", func(p *schema.Pack, f *schema.Family) bool { return slices.Index(p.Families, f)%2 == 0 }},
		{"odd families", func(p *schema.Pack, f *schema.Family) bool { return slices.Index(p.Families, f)%2 == 1 }},
	} {
		// Each crawl has servers and a console of its own.
		t.Run(tt.name, func(t *testing.T) { t.Parallel(); sensitiveCrawl(t, tt.mark) })
	}
}

func sensitiveCrawl(t *testing.T, mark func(p *schema.Pack, f *schema.Family) bool) {
	ctx := context.Background()
	now := time.Now()
	ei, gw, vq := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	if err := demo.SeedEIsland(ctx, func(db int) redis.Cmdable { return ei.Client(db) }, now); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedGateway(ctx, gw.Client(0), now); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedVertique(ctx, vq.Client(0), now, demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	packs := sensitivePacks(t, mark)
	packOf := map[string]*schema.Pack{}
	for _, p := range packs {
		packOf[p.Name] = p
	}
	servers := []struct {
		name string
		rs   *redistest.Server
	}{{"eisland", ei}, {"gateway", gw}, {"vertique", vq}}
	var planted []sensKey
	for _, s := range servers {
		// Every command in the slowlog: the planting's writes name the
		// sensitive keys and their values, which the slowlog page withholds.
		s.rs.Client(0).ConfigSet(ctx, "slowlog-log-slower-than", "0")
		s.rs.Client(0).ConfigSet(ctx, "slowlog-max-len", "1024")
	}
	for _, s := range servers {
		planted = append(planted, plantMarkers(t, s.rs, s.name, packOf[s.name])...)
	}
	// The crawl's user is banned (bloom bits and set, as the seed writes
	// a ban): a verdict must not tell it.
	if bf := packOf["eisland"].Family("user-ban-bloom"); bf != nil {
		bp := bf.Params.(*schema.BloomParams)
		for _, pos := range redisview.BloomPositions(sensUser, bp.Bits, bp.Hashes) {
			ei.Client(9).SetBit(ctx, "user:ban:bloom", pos, 1)
		}
		ei.Client(9).SAdd(ctx, "user:ban:set", sensUser)
	}
	var conns []redisview.ConnConfig
	packFor := map[string]string{}
	for _, s := range servers {
		conns = append(conns, redisview.ConnConfig{Name: s.name, URL: s.rs.URL(0)})
		packFor[s.name] = s.name
	}
	f := startConsole(t, ei, server.Config{Conns: conns, PackFor: packFor, Packs: packs,
		Vertique: handlers.VertiqueSecret{Secret: []byte(demo.DemoSecret), From: "the crawl"},
		Sweep:    stats.SweepBudget{KeysPerSec: 1_000_000, Count: 1000},
		// Production cadence: the crawl waits for no change to show, and faster
		// background reads would only add MONITOR lines and take CPU.
		LimitsBudget: limits.DefaultBudget, QuotaInterval: time.Second}, nil).up(t)
	for i := range conns {
		waitFor(t, conns[i].Name+" up", func() bool { return f.reg.All()[i].Status().Up })
	}

	// Two audited actions on planted keys: the audit page, its topic and
	// the undo preview have records of sensitive keys to show.
	admin := action.Actor{User: "crawler", Level: action.Admin}
	var undo, record string
	done := 0
	for _, k := range planted {
		if k.Conn != "eisland" || done == 2 {
			continue
		}
		kind, args := action.KindSetTTL, map[string]string{action.ArgTTL: "3h"}
		if done == 1 {
			kind, args = action.KindDeleteKey, nil
		}
		pv, err := f.run.Preview(ctx, admin, f.reg.All()[0], kind, action.Request{Conn: k.Conn, DB: k.DB, Key: k.Key, Args: args})
		if err != nil {
			continue // not applicable to this key
		}
		out, err := f.run.Execute(ctx, admin, f.reg.All()[0], pv)
		if err != nil {
			t.Fatalf("%s on %q: %v", kind, k.Key, err)
		}
		done++
		undo = route.Undo{Conn: k.Conn, DB: k.DB, Record: out.ID}.URL()
		record = route.AuditRecordURL(out.ID)
	}
	if done < 2 {
		t.Fatalf("the audited actions did not run (%d)", done)
	}

	c := &sensCrawl{t: t, f: f, b: newBrowser(t, f.srv.URL), seen: map[string]bool{}, perRoute: map[string]int{}, topics: map[string]bool{}}
	c.router(f.routes)
	examples := sensPageExamples(planted, undo)
	topicExamples := sensTopicExamples(planted)
	bulkJob, bulkTopic := sensBulkJob(t, c.b, planted)
	examples[route.BulkJob], topicExamples["bulk"] = []string{bulkJob}, []string{bulkTopic}
	examples[route.AuditRecord] = []string{record}

	// Every GET route has examples; every POST route is a write the crawl
	// leaves alone (named here, so that a new one is looked at).
	writes := []string{route.Login, route.Logout, route.SignOutEverywhere, route.ClearLockout, route.Preview, route.Execute, route.BansRebuild, route.AccountTokens, route.RevokeToken}
	// The console's POST runs what it is given: its refusals of sensitive
	// keys are TestConsoleRoles's (a GET only fills the form).
	writes = append(writes, route.Console)
	// Create key is a preview of create-key, like route.Preview: what it
	// shows of a sensitive key is TestEditSensitiveShowsSizesOnly's.
	writes = append(writes, route.CreateKey)
	writes = append(writes, route.Import, route.ImportStart)
	writes = append(writes, route.BulkCount, route.BulkStart, route.BulkCancel, route.BulkResume, route.BulkUndo)
	for _, r := range f.routes {
		switch {
		case r.Asset || r.Path == route.Live:
		case r.Method == http.MethodGet:
			if len(examples[r.Path]) == 0 {
				t.Errorf("GET %s has no example in the sensitive crawl: add one", r.Path)
			}
		case !slices.Contains(writes, r.Path):
			t.Errorf("%s %s: a route the sensitive crawl does not know: add an example or name it a write", r.Method, r.Path)
		}
	}
	for _, kind := range handlers.TopicKinds() {
		if len(topicExamples[kind]) == 0 {
			t.Errorf("topic kind %q has no example in the sensitive crawl: add one", kind)
		}
	}
	// Redis itself says what was read: every command the console sends
	// while it crawls.
	mon := startSensMonitor(t, servers[0].rs, servers[1].rs, servers[2].rs)
	var start []string
	for _, us := range examples {
		start = append(start, us...)
	}
	slices.Sort(start)
	c.crawl(start)
	for _, ts := range topicExamples {
		for _, tp := range ts {
			c.topics[tp] = true
		}
	}
	// The JSON API and /metrics read through the same guard.
	apiURLs := sensAPIURLs(planted)
	apiOK := c.crawlAPI(planted)
	if apiOK < len(apiURLs)/2 {
		t.Errorf("only %d of %d API URLs answered 200: the API crawl proves little", apiOK, len(apiURLs))
	}
	t.Logf("API: %d of %d URLs answered 200", apiOK, len(apiURLs))
	watched := c.watchAll()
	// No command that reads a value, a member, a score or a bit was sent
	// on a key of a family (every family is sensitive): what is never
	// shown is never read, so nothing can show it, markers or not (a ban
	// verdict, a rank).
	lines := mon.stop()
	reads := map[string][]string{}
	for _, l := range lines {
		conn := []string{"eisland", "gateway", "vertique"}[l.server]
		db, args, ok := parseMonitorLine(l.line)
		if !ok || len(args) < 2 || !sensValueReads[strings.ToUpper(args[0])] {
			continue
		}
		keys := args[1:2]
		if strings.EqualFold(args[0], "mget") {
			keys = args[1:]
		}
		for _, k := range keys {
			if fam, ok := packOf[conn].Classifier().Classify(db, k); ok && fam.Sensitive {
				what := fmt.Sprintf("%s on %s (%s)", strings.ToUpper(args[0]), fam.ID, conn)
				if len(reads[what]) < 3 {
					reads[what] = append(reads[what], fmt.Sprintf("db%d %q", db, k))
				}
			}
		}
	}
	for what, ex := range reads {
		t.Errorf("the console read a sensitive value: %s, e.g. %s", what, strings.Join(ex, ", "))
	}
	// Coverage: every GET route was answered, every topic kind watched.
	for _, r := range f.routes {
		if r.Method == http.MethodGet && !r.Asset && r.Path != route.Live && c.perRoute[r.Path] == 0 {
			t.Errorf("GET %s was never opened", r.Path)
		}
	}
	for _, kind := range handlers.TopicKinds() {
		if watched[kind] == 0 {
			t.Errorf("no topic of kind %q was watched", kind)
		}
	}
	t.Logf("planted markers in %d keys; opened %d URLs (HTML and JSON) over %d routes; watched %d topics over %d kinds; %d frames read; %d commands monitored",
		len(planted), len(c.seen), len(c.perRoute), len(c.topics), len(watched), c.frames, len(lines))
}

// plantMarkers writes a marker into up to 4 keys of every family on rs
// (every database), keeping each key's type and TTL, and gives every
// sorted set the crawl's user with its score (sensScore in a sensitive
// family's).
func plantMarkers(t *testing.T, rs *redistest.Server, conn string, pack *schema.Pack) []sensKey {
	t.Helper()
	ctx := context.Background()
	cls := pack.Classifier()
	perFamily := map[string]int{}
	var out []sensKey
	for db := 0; db < 15; db++ {
		c := rs.Client(db)
		var keys []string
		iter := c.Scan(ctx, 0, "", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		for _, k := range keys {
			m, ok := cls.Match(db, k)
			if !ok || perFamily[m.Family.ID] >= 4 {
				continue
			}
			typ, err := c.Type(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			n := len(out)
			mk, score := sensMarker+strconv.Itoa(n), sensScore
			if !m.Family.Sensitive {
				mk, score = sensOpen+strconv.Itoa(n), 12.5
			}
			switch typ {
			case "string":
				err = c.SetArgs(ctx, k, mk, redis.SetArgs{KeepTTL: true}).Err()
			case "hash":
				err = c.HSet(ctx, k, mk+"f", mk+"v").Err()
			case "set":
				err = c.SAdd(ctx, k, mk).Err()
			case "list":
				err = c.RPush(ctx, k, mk).Err()
			case "zset":
				err = c.ZAdd(ctx, k, redis.Z{Score: float64(n), Member: mk}, redis.Z{Score: score, Member: sensUser}).Err()
			case "stream":
				err = c.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []string{mk + "f", mk + "v"}}).Err()
			default:
				continue
			}
			if err != nil {
				t.Fatalf("planting in %s db%d %q: %v", conn, db, k, err)
			}
			perFamily[m.Family.ID]++
			out = append(out, sensKey{Conn: conn, DB: db, Key: k, Type: typ, Family: m.Family, Vars: m.Vars})
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no key of any family to plant a marker in", conn)
	}
	return out
}

// sensPageExamples are URLs of every GET route, from the planted keys.
// undo is an undo preview's URL.
func sensPageExamples(planted []sensKey, undo string) map[string][]string {
	ex := map[string][]string{
		route.Healthz:      {"/healthz"},
		route.Readyz:       {"/readyz"},
		route.Login:        {"/login"},
		route.Home:         {"/"},
		route.Audit:        {"/audit"},
		route.Leaderboards: {"/leaderboards"},
		route.Account:      {"/account"},
		route.UndoPreview:  {undo},
	}
	ex[route.AccountTokens] = []string{"/account/tokens"}
	add := func(path, u string) {
		if !slices.Contains(ex[path], u) {
			ex[path] = append(ex[path], u)
		}
	}
	users := map[string][]string{}
	for _, k := range planted {
		add(route.Overview, route.OverviewURL(k.Conn))
		add(route.Database, route.DatabaseURL(k.Conn, k.DB))
		add(route.Keys, route.FamilyKeysURL(k.Conn, k.DB, k.Family.ID))
		if i := strings.IndexByte(k.Key, ':'); i > 0 {
			add(route.Keys, route.PrefixKeysURL(k.Conn, k.DB, k.Key[:i+1]))
		}
		add(route.Key, route.KeyURL(k.Conn, k.DB, k.Key))
		add(route.Export, route.ExportKeyURL(k.Conn, k.DB, k.Key))
		add(route.Export, route.ExportFamilyURL(k.Conn, k.DB, k.Family.ID))
		add(route.Export, route.ExportPatternURL(k.Conn, k.DB, "*"))
		add(route.Import, route.ImportURL(k.Conn, k.DB))
		add(route.Console, route.ConsoleURL(k.Conn)+"?db="+strconv.Itoa(k.DB)+"&command="+url.QueryEscape("GET "+cmdconsole.Quote(k.Key)))
		add(route.Preview, route.Action{Kind: action.KindDeleteKey, Conn: k.Conn, DB: k.DB, Key: k.Key}.PreviewURL())
		if k.Type == "zset" {
			w := route.Window{Conn: k.Conn, DB: k.DB, Key: k.Key, N: route.DefaultRows}
			add(route.Leaderboard, w.URL())
			add(route.Leaderboard, w.URL()+"&member="+url.QueryEscape(sensUser))
		}
		add(route.Search, route.SearchURL(k.Conn, k.Key))
		add(route.Search, route.SearchURL(k.Conn, k.Family.ID))
		for _, v := range k.Vars {
			switch strings.ToLower(v.Name) {
			case "username", "user", "member", "account", "userid", "ownerusername":
				if len(users[k.Conn]) < 3 && !slices.Contains(users[k.Conn], v.Value) {
					users[k.Conn] = append(users[k.Conn], v.Value)
				}
			case "keyid":
				add(route.GatewayKey, route.GatewayKeyURL(k.Conn, v.Value))
			}
		}
	}
	for _, conn := range []string{"eisland", "gateway", "vertique"} {
		add(route.Search, route.SearchURL(conn, sensUser))
		add(route.Search, route.SearchURL(conn, "*"))
		add(route.Quotas, route.QuotasURL(conn))
		add(route.GatewayKey, route.GatewayKeyPath(conn))
		add(route.Vertique, route.VertiqueURL(conn))
		add(route.Vertique, route.VertiqueURL(conn)+"?policy=api-requests&revision=7&enc=parts&key="+url.QueryEscape("acme\nak_live_7Hq2"))
		add(route.Bans, route.BansURL(conn))
		add(route.Bans, route.BanCheckURL(conn, sensUser))
		add(route.Limits, route.LimitsURL(conn))
		add(route.Limits, route.LimitsURL(conn)+"?q="+url.QueryEscape(sensUser))
		add(route.Locks, route.LocksURL(conn))
		add(route.Slowlog, route.SlowlogURL(conn))
		add(route.Latency, route.LatencyURL(conn))
		add(route.PubSub, route.PubSubURL(conn))
		add(route.PubSub, route.PubSubURL(conn)+"?watch="+url.QueryEscape(sensUser)+"&mode=pattern")
		add(route.Violations, route.ViolationsURL(conn))
		add(route.Server, route.ServerInfoURL(conn))
		add(route.Clients, route.ClientsURL(conn))
		add(route.Clients, route.ClientsURL(conn)+"?sort=-idle&q="+url.QueryEscape(sensUser))
		for _, u := range append([]string{sensUser}, users[conn]...) {
			add(route.User, route.UserURL(conn, u))
		}
	}
	return ex
}

// sensTopicExamples are topics of every kind, from the planted keys.
func sensTopicExamples(planted []sensKey) map[string][]string {
	ex := map[string][]string{
		"leaderboards": {handlers.LeaderboardsTopic{}.String()},
		"audit":        {handlers.AuditTopic{}.String(), handlers.AuditTopic{Undo: true}.String()},
	}
	add := func(kind string, tp handlers.Topic) {
		name := tp.String()
		if k, _, _ := strings.Cut(name, ":"); k != kind {
			panic(fmt.Sprintf("topic %q is not of kind %q", name, kind))
		}
		if !slices.Contains(ex[kind], name) && len(ex[kind]) < 40 {
			ex[kind] = append(ex[kind], name)
		}
	}
	for _, conn := range []string{"eisland", "gateway", "vertique"} {
		add("overview", handlers.OverviewTopic{Conn: conn})
		add("quotas", handlers.QuotasTopic{Conn: conn})
		add("quotas", handlers.QuotasTopic{Conn: conn, Act: true})
		add("vtinventory", handlers.VertiqueInventoryTopic{Conn: conn})
		add("bans", handlers.BansTopic{Query: route.BansQuery{Conn: conn}})
		add("bans", handlers.BansTopic{Query: route.BansQuery{Conn: conn, Check: sensUser}, Act: true})
		add("search", handlers.SearchTopic{Conn: conn, Q: sensUser})
		add("limits", handlers.OpsTopic{Kind: "limits", Conn: conn})
		add("limits", handlers.OpsTopic{Kind: "limits", Conn: conn, Filter: sensUser, Act: true})
		add("locks", handlers.OpsTopic{Kind: "locks", Conn: conn, Act: true})
		add("slowlog", handlers.SlowlogTopic{Conn: conn})
		add("latency", handlers.LatencyTopic{Conn: conn})
		add("pubsubwatch", handlers.PubSubWatchTopic{Conn: conn, Mode: "pattern", Name: "*"})
		add("user", handlers.UserTopic{Conn: conn, Name: sensUser})
		add("user", handlers.UserTopic{Conn: conn, Name: sensUser, Support: true})
	}
	for _, k := range planted {
		add("dbstats", handlers.DBTopic{Conn: k.Conn, DB: k.DB})
		add("key", handlers.KeyTopic{Conn: k.Conn, DB: k.DB, Key: k.Key})
		add("search", handlers.SearchTopic{Conn: k.Conn, Q: k.Family.ID})
		if k.Type == "zset" {
			w := route.Window{Conn: k.Conn, DB: k.DB, Key: k.Key, N: route.DefaultRows}
			add("lb", handlers.LeaderboardTopic{Window: w})
			add("lb", handlers.LeaderboardTopic{Window: w, Remove: true})
		}
		if k.Family.Role == schema.RoleBucket4j {
			add("vtbucket", handlers.VertiqueBucketTopic{Conn: k.Conn, DB: k.DB, Key: k.Key})
		}
		for _, v := range k.Vars {
			if strings.EqualFold(v.Name, "keyId") {
				add("gwkey", handlers.GatewayKeyTopic{Conn: k.Conn, ID: v.Value})
			}
		}
		// A key list's topic is named by its page's parameters.
		name := "keys:" + url.Values{"conn": {k.Conn}, "db": {strconv.Itoa(k.DB)}, "family": {k.Family.ID}}.Encode()
		if !slices.Contains(ex["keys"], name) {
			ex["keys"] = append(ex["keys"], name)
		}
	}
	return ex
}

// sensCrawl opens pages and topics and checks every output for markers.
type sensCrawl struct {
	t        *testing.T
	f        *console
	b        *browser
	e        *echo.Echo
	seen     map[string]bool
	perRoute map[string]int // URLs opened by route
	topics   map[string]bool
	frames   int
}

// router matches a URL to its route of the route table (echo's own
// router, given the table's GET routes).
func (c *sensCrawl) router(routes []handlers.Route) {
	c.e = echo.New()
	for _, r := range routes {
		if r.Method == http.MethodGet {
			c.e.GET(r.Path, func(echo.Context) error { return nil })
		}
	}
}

func (c *sensCrawl) routeOf(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	ctx := c.e.NewContext(httptest.NewRequest(http.MethodGet, pu.RequestURI(), nil), nil)
	c.e.Router().Find(http.MethodGet, pu.Path, ctx)
	return ctx.Path()
}

// check fails the test when out shows a marker.
func (c *sensCrawl) check(what, out string) {
	c.t.Helper()
	for _, l := range sensLeaks {
		if i := strings.Index(out, l); i >= 0 {
			c.t.Errorf("%s shows %q: …%s…", what, l, out[max(0, i-300):min(len(out), i+200)])
			return
		}
	}
}

// maxPerRoute bounds the URLs the crawl opens of one route (links found
// on pages; the examples are opened whatever their number).
const maxPerRoute = 60

// crawl opens start, then every same-site link the pages offer (GET
// routes of the table, bounded per route), as HTML and as JSON, and
// collects the topics the pages connect to.
func (c *sensCrawl) crawl(start []string) {
	queue := slices.Clone(start)
	examples := map[string]bool{}
	for _, u := range start {
		examples[u] = true
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if c.seen[u] {
			continue
		}
		rp := c.routeOf(u)
		if rp == "" || rp == route.Live || rp == route.Static || rp == route.Login && !examples[u] {
			continue
		}
		if !examples[u] && c.perRoute[rp] >= maxPerRoute {
			continue
		}
		c.seen[u] = true
		c.perRoute[rp]++
		code, _, body := c.b.do(http.MethodGet, u, nil)
		c.check("GET "+u, body)
		_, _, js := c.b.do(http.MethodGet, u, nil, "Accept", "application/json")
		c.check("GET "+u+" as JSON", js)
		if code != http.StatusOK || !strings.Contains(body, "<html") {
			continue
		}
		d, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			c.t.Fatalf("%s: %v", u, err)
		}
		d.Find("[ws-connect]").Each(func(_ int, s *goquery.Selection) {
			ws, _ := s.Attr("ws-connect")
			if pu, err := url.Parse(ws); err == nil && pu.Path == route.Live {
				c.topics[pu.Query().Get("topic")] = true
			}
		})
		d.Find("a[href]").Each(func(_ int, s *goquery.Selection) {
			h, _ := s.Attr("href")
			if strings.HasPrefix(h, "/") && !strings.HasPrefix(h, "//") && !c.seen[h] {
				queue = append(queue, h)
			}
		})
	}
}

// watchAll dials every topic collected and reads its first frame; a topic
// the console refuses (a sensitive key, a kind the connection has not)
// counts as watched: it sent nothing. It returns the topics watched by
// kind.
func (c *sensCrawl) watchAll() map[string]int {
	byKind := map[string]int{}
	names := make([]string, 0, len(c.topics))
	for tp := range c.topics {
		names = append(names, tp)
	}
	slices.Sort(names)
	for _, tp := range names {
		kind, _, _ := strings.Cut(tp, ":")
		ws, res, err := c.b.dialAs(tp)
		if err != nil {
			if res == nil || res.StatusCode < 400 || res.StatusCode >= 500 {
				c.t.Errorf("topic %q: %v %+v", tp, err, res)
			}
			byKind[kind]++
			continue
		}
		_ = ws.SetReadDeadline(time.Now().Add(15 * time.Second))
		_, msg, err := ws.ReadMessage()
		ws.Close()
		if err != nil {
			c.t.Errorf("topic %q: no first frame: %v", tp, err)
			continue
		}
		c.frames++
		byKind[kind]++
		c.check("topic "+tp, string(msg))
	}
	return byKind
}

// sensValueReads are the commands that read what a key holds (a value, a
// member, a field, a score, a rank, a bit), not what it is (its type,
// TTL, size or memory). DUMP is not one: an action's preview fingerprints
// a sensitive key's DUMP keyed with the runner's secret (HMAC, see
// redisview/action/fingerprint.go) so that its confirmation acts on the
// key that was previewed; the payload is never shown or recorded (and a
// page showing it would show the markers).
var sensValueReads = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`GET GETRANGE SUBSTR GETEX GETDEL MGET LCS
		HGET HMGET HGETALL HSCAN HKEYS HVALS HRANDFIELD HEXISTS HSTRLEN
		SMEMBERS SSCAN SISMEMBER SMISMEMBER SRANDMEMBER SINTER SUNION SDIFF SINTERCARD
		ZRANGE ZRANGEBYSCORE ZREVRANGE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX ZSCORE ZMSCORE ZRANK ZREVRANK ZSCAN ZCOUNT ZLEXCOUNT ZRANDMEMBER
		LRANGE LINDEX LPOS XRANGE XREVRANGE XREAD XINFO
		GETBIT BITCOUNT BITPOS BITFIELD_RO SORT SORT_RO`) {
		sensValueReads[c] = true
	}
}

// monitorLine is one line of MONITOR from one of the crawl's servers.
type monitorLine struct {
	server int
	line   string
}

type sensMonitor struct {
	conns []net.Conn
	mu    sync.Mutex
	lines []monitorLine
}

// startSensMonitor runs MONITOR on each server, on a connection of its
// own (RESP: one simple string per command the server runs).
func startSensMonitor(t *testing.T, servers ...*redistest.Server) *sensMonitor {
	t.Helper()
	m := &sensMonitor{}
	for i, rs := range servers {
		opt, err := redis.ParseURL(rs.URL(0))
		if err != nil {
			t.Fatal(err)
		}
		nc, err := net.Dial("tcp", opt.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		if _, err := nc.Write([]byte("MONITOR\r\n")); err != nil {
			t.Fatal(err)
		}
		m.conns = append(m.conns, nc)
		go func() {
			rd := bufio.NewReaderSize(nc, 1<<16)
			for {
				l, err := rd.ReadString('\n')
				if err != nil {
					return
				}
				if l = strings.TrimSuffix(l, "\r\n"); strings.HasPrefix(l, "+") {
					m.mu.Lock()
					m.lines = append(m.lines, monitorLine{i, l[1:]})
					m.mu.Unlock()
				}
			}
		}()
		// MONITOR is on once the server echoes a command of ours.
		mark := "sens-monitor-" + strconv.Itoa(i)
		redistest.Eventually(t, 10*time.Second, fmt.Sprintf("MONITOR on server %d: the echo", i), func() bool {
			if m.saw(mark) {
				return true
			}
			rs.Client(0).Echo(context.Background(), mark)
			return false
		})
	}
	return m
}

func (m *sensMonitor) saw(s string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.ContainsFunc(m.lines, func(l monitorLine) bool { return strings.Contains(l.line, s) })
}

// stop ends MONITOR and returns every line seen.
func (m *sensMonitor) stop() []monitorLine {
	for _, c := range m.conns {
		c.Close()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.lines)
}

// parseMonitorLine reads `1700000000.123456 [DB ADDR] "CMD" "ARG" …`:
// the database and the arguments, unquoted.
func parseMonitorLine(l string) (db int, args []string, ok bool) {
	open := strings.IndexByte(l, '[')
	end := strings.Index(l, "] ")
	if open < 0 || end < open {
		return 0, nil, false
	}
	dbs, _, _ := strings.Cut(l[open+1:end], " ")
	db, err := strconv.Atoi(dbs)
	if err != nil {
		return 0, nil, false
	}
	rest := l[end+2:]
	for len(rest) > 0 {
		if rest[0] != '"' {
			return 0, nil, false
		}
		i := 1
		for i < len(rest) && rest[i] != '"' {
			if rest[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(rest) {
			return 0, nil, false
		}
		a, err := strconv.Unquote(rest[:i+1])
		if err != nil {
			return 0, nil, false
		}
		args = append(args, a)
		rest = strings.TrimPrefix(rest[i+1:], " ")
	}
	return db, args, true
}
