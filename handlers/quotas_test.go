package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
)

const vtSecret = "quotas-test-secret-NEVER-SHOWN-7f3a"

// opsConsole serves three connections on one redis-server: eisland (its
// quotas in databases 11 and 12), gateway and vertique (database 0), the
// state written as the seeds write it.
func opsConsole(t *testing.T, secret []byte, mutate ...func(*server.Config)) (*console, *redistest.Server) {
	t.Helper()
	rs := redistest.Start(t)
	ctx := context.Background()
	now := time.Now()
	month := now.In(time.FixedZone("+08:00", 8*3600)).Format("200601")
	db11, db12, g := rs.Client(11), rs.Client(12), rs.Client(0)
	db11.IncrBy(ctx, "qweather:quota:provider:qweather:"+month, 47_500)
	db11.Expire(ctx, "qweather:quota:provider:qweather:"+month, 10*24*time.Hour)
	db11.IncrBy(ctx, "tmt:quota:monthly:"+month, 1_000_000)
	db11.Expire(ctx, "tmt:quota:monthly:"+month, 10*24*time.Hour)
	db12.Set(ctx, "agent:balance:alice", "12.50000000", 0)
	gm := now.UTC().Format("200601")
	// Empty, refilled "now" by a router whose clock is 30 s ahead: the
	// bucket stays empty (throttled) however long a loaded machine takes
	// to get to the page (at 1 token a second it refilled within a second).
	g.HSet(ctx, "q:rps:gk_a", "tokens", "0", "last_refill", now.Add(30*time.Second).UnixMilli())
	g.Expire(ctx, "q:rps:gk_a", 2*time.Minute)
	g.Set(ctx, "q:tokens:gk_a:"+gm, 123_456, 40*24*time.Hour)
	g.Set(ctx, "q:reserved:req_1", 2048, 4*time.Minute)
	g.Set(ctx, "q:reserved:req_forever", 8192, 0)
	g.SAdd(ctx, "q:conc:gk_a", "req_1", "req_gone")
	g.Expire(ctx, "q:conc:gk_a", 5*time.Minute)
	g.Set(ctx, "cb:hint:openai:gpt-4o", "open", 30*time.Second)
	g.Set(ctx, "cfg:routing:version", 42, 0)
	g.Set(ctx, "q:tokens:<b>bold</b>\xff:"+gm, 5, time.Hour) // a hostile key id
	f, _ := vertique.Family(schema.BuiltinPack("vertique"))
	state := demo.EncodeBucketState(demo.BucketState{Format: 1,
		Bandwidths: []demo.Bandwidth{{Capacity: 5, InitialTokens: 5, RefillPeriodNanos: int64(15 * time.Minute), RefillTokens: 5, Intervally: true, TimeOfFirstRefillMillis: demo.NotAligned}},
		States:     []demo.BandwidthState{{LastRefillNanos: now.UnixMilli() * 1e6, Tokens: 2}}})
	k, _ := vertique.Key(f, []byte(vtSecret), "login-attempts", "3", vertique.CanonicalKey("alice"))
	g.Set(ctx, k, state, time.Hour)
	old, _ := vertique.Key(f, []byte("the-old-secret"), "login-attempts", "3", vertique.CanonicalKey("alice"))
	g.Set(ctx, old, state, time.Minute)

	cfg := server.Config{
		Conns:   []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}, {Name: "gateway", URL: rs.URL(0)}, {Name: "vertique", URL: rs.URL(0)}},
		PackFor: map[string]string{"eisland": "eisland", "gateway": "gateway", "vertique": "vertique"},
	}
	if secret != nil {
		cfg.Vertique = handlers.VertiqueSecret{Secret: secret, From: "environment variable VT_SECRET"}
	}
	for _, m := range mutate {
		m(&cfg)
	}
	return startConsole(t, rs, cfg, nil).up(t), rs
}

func getJSON(t *testing.T, u string, v any) int {
	t.Helper()
	code, _, body := get(t, u, "Accept", "application/json")
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%s: %v: %.300s", u, err, body)
	}
	return code
}

func TestQuotasPage(t *testing.T) {
	t.Parallel()
	f, _ := opsConsole(t, nil)
	code, _, body := get(t, f.srv.URL+"/c/eisland/quotas")
	if code != http.StatusOK {
		t.Fatalf("status %d: %.300s", code, body)
	}
	qw, tmt := strings.Index(body, "qweather:quota:provider:qweather:"), strings.Index(body, "tmt:quota:monthly:")
	if qw < 0 || tmt < 0 || qw > tmt || !strings.Contains(body, "95.0%") || !strings.Contains(body, "20.0%") || !strings.Contains(body, `ws-connect="/ws?topic=quotas%3Aeisland"`) {
		t.Errorf("eisland quotas: QWeather (95.0%%) should come before TMT (20.0%%), live: %.2000s", body)
	}
	// The JSON is list-quotas': numbers are numbers, names byte-exact.
	var vm struct {
		Families struct {
			Items []struct {
				ID    string
				Limit *int64
				Unit  string
				Rows  []struct {
					Key       json.RawMessage
					SubjectID json.RawMessage `json:"subject_id"`
					Used      *int64
					NoTTL     bool `json:"no_ttl"`
					Level     string
					Orphans   []json.RawMessage
				}
			}
		}
		Configs []struct {
			Key    json.RawMessage
			Amount json.RawMessage
		}
	}
	if code := getJSON(t, f.srv.URL+"/c/gateway/quotas", &vm); code != http.StatusOK {
		t.Fatalf("JSON status %d", code)
	}
	byID := map[string]int{}
	for i, fam := range vm.Families.Items {
		byID[fam.ID] = i
	}
	tok := vm.Families.Items[byID["monthly-tokens"]]
	if len(tok.Rows) != 2 || tok.Rows[0].Used == nil || *tok.Rows[0].Used != 123456 || tok.Limit != nil || tok.Unit != "tokens" ||
		jsonName(t, tok.Rows[0].SubjectID) != "gk_a" {
		t.Errorf("token budgets %+v", tok)
	}
	res := vm.Families.Items[byID["reservation"]]
	if len(res.Rows) != 2 || jsonName(t, res.Rows[0].Key) != "q:reserved:req_forever" || !res.Rows[0].NoTTL || res.Rows[0].Level != "full" {
		t.Errorf("reservations %+v, want the one without TTL first and flagged", res.Rows)
	}
	conc := vm.Families.Items[byID["concurrency"]]
	if len(conc.Rows) != 1 || len(conc.Rows[0].Orphans) != 1 || jsonName(t, conc.Rows[0].Orphans[0]) != "req_gone" {
		t.Errorf("concurrency %+v, want req_gone flagged", conc.Rows)
	}
	if len(vm.Configs) != 1 || string(vm.Configs[0].Amount) != "42" {
		t.Errorf("configs %+v", vm.Configs)
	}
	// The hostile key id is escaped in the page, linked byte-exact, and
	// carried as bytes in JSON.
	_, _, html := get(t, f.srv.URL+"/c/gateway/quotas")
	if strings.Contains(html, "<b>bold</b>") || !strings.Contains(html, `&lt;b&gt;bold&lt;/b&gt;\xff`) ||
		!strings.Contains(html, "/c/gateway/gateway/key?id=%3Cb%3Ebold%3C%2Fb%3E%FF") {
		t.Errorf("hostile key id not escaped or not linked byte-exact")
	}
	_, _, js := get(t, f.srv.URL+"/c/gateway/quotas", "Accept", "application/json")
	if strings.Contains(js, "\ufffd") || !strings.Contains(js, `"b64"`) {
		t.Errorf("a key id that is not UTF-8 is not carried as bytes in JSON")
	}
	// A pack without such families: an empty state, not an error.
	code, _, body = get(t, f.srv.URL+"/c/vertique/quotas")
	if code != http.StatusOK || !strings.Contains(body, `data-testid="quotas-empty"`) || !strings.Contains(body, "has no quota") {
		t.Errorf("vertique quotas: %d %.500s", code, body)
	}
	if code, _, _ := get(t, f.srv.URL+"/c/nope/quotas"); code != http.StatusNotFound {
		t.Errorf("unknown connection: %d", code)
	}
	if code, _, _ := get(t, f.srv.URL+"/ws?topic=quotas:NOPE"); code != http.StatusNotFound {
		t.Errorf("bad topic: %d", code)
	}
}

func TestGatewayKeyPage(t *testing.T) {
	t.Parallel()
	f, rs := opsConsole(t, nil)
	// The JSON is get-gateway-key's.
	type row struct {
		Key    json.RawMessage
		Gone   bool
		Used   *int64
		Amount json.RawMessage
	}
	var vm struct {
		ID     json.RawMessage
		State  string
		Bucket struct {
			Exists    bool
			Capacity  *float64
			Throttled bool
		}
		Budgets []struct {
			Current bool
			Row     row
		}
		InFlight     row `json:"in_flight"`
		Reservations []struct {
			Request json.RawMessage
			Row     row
		}
		Hints struct{ Items []row } `json:"breaker_hints"`
	}
	if code := getJSON(t, f.srv.URL+"/c/gateway/gateway/key?id=gk_a", &vm); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if vm.State != "present" || jsonName(t, vm.ID) != "gk_a" || !vm.Bucket.Exists || vm.Bucket.Capacity == nil || *vm.Bucket.Capacity != 60 || !vm.Bucket.Throttled {
		t.Errorf("bucket %+v (state %q), want a throttled bucket of 60", vm.Bucket, vm.State)
	}
	if len(vm.Budgets) != 2 || !vm.Budgets[0].Current || vm.Budgets[0].Row.Used == nil || *vm.Budgets[0].Row.Used != 123456 || !vm.Budgets[1].Row.Gone {
		t.Errorf("budgets %+v", vm.Budgets)
	}
	if vm.InFlight.Used == nil || *vm.InFlight.Used != 2 || len(vm.Reservations) != 2 || !vm.Reservations[0].Row.Gone || jsonName(t, vm.Reservations[0].Request) != "req_gone" || string(vm.Reservations[1].Row.Amount) != "2048" {
		t.Errorf("in flight %+v, reservations %+v", vm.InFlight, vm.Reservations)
	}
	if len(vm.Hints.Items) != 1 || jsonName(t, vm.Hints.Items[0].Key) != "cb:hint:openai:gpt-4o" {
		t.Errorf("hints %+v", vm.Hints)
	}
	// Unknown and hostile ids: 200 with the empty state, escaped.
	hostile := `<script>alert(1)</script>"'`
	code, _, body := get(t, f.srv.URL+"/c/gateway/gateway/key?id="+url.QueryEscape(hostile))
	if code != http.StatusOK || !strings.Contains(body, "No keys for this id") || strings.Contains(body, "<script>alert(1)") {
		t.Errorf("hostile id: %d %.500s", code, body)
	}
	if code, _, _ := get(t, f.srv.URL+"/c/gateway/gateway/key?id="+strings.Repeat("x", 300)); code != http.StatusBadRequest {
		t.Errorf("overlong id: %d, want 400", code)
	}
	if code, _, body := get(t, f.srv.URL+"/c/gateway/gateway/key"); code != http.StatusOK || !strings.Contains(body, `data-testid="gwkey-form"`) {
		t.Errorf("no id: %d", code)
	}
	if code, _, _ := get(t, f.srv.URL+"/c/eisland/gateway/key?id=gk_a"); code != http.StatusNotFound {
		t.Errorf("a pack without API key families: %d, want 404", code)
	}
	// Invalid UTF-8 in the id survives to the page escaped.
	code, _, body = get(t, f.srv.URL+"/c/gateway/gateway/key?id=gk%FF%FE")
	if code != http.StatusOK || !strings.Contains(body, `gk\xff\xfe`) {
		t.Errorf("invalid UTF-8 id: %d", code)
	}
	_ = rs
}

func TestVertiquePageNeverShowsTheSecret(t *testing.T) {
	t.Parallel()
	f, _ := opsConsole(t, []byte(vtSecret))
	fam, _ := vertique.Family(schema.BuiltinPack("vertique"))
	want, _ := vertique.Key(fam, []byte(vtSecret), "login-attempts", "3", vertique.CanonicalKey("alice"))
	lookup := "/c/vertique/vertique?policy=login-attempts&revision=3&key=alice&enc=parts"
	var outputs []string
	for _, u := range []string{"/c/vertique/vertique", lookup, "/c/vertique/vertique?policy=x", "/c/eisland/vertique"} {
		for _, accept := range []string{"text/html", "application/json"} {
			_, _, body := get(t, f.srv.URL+u, "Accept", accept)
			outputs = append(outputs, body)
		}
	}
	for _, o := range outputs {
		if strings.Contains(o, vtSecret) || strings.Contains(o, "NEVER-SHOWN") {
			t.Fatalf("the secret is in an output: %.300s", o)
		}
	}
	// The finder's JSON is find-vertique-bucket's; the inventory's
	// get-vertique's.
	var bkt struct {
		Key    string
		State  string
		Bucket struct {
			Tokens     int64
			Bandwidths []struct{ Capacity int64 }
		}
	}
	if code := getJSON(t, f.srv.URL+lookup, &bkt); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if bkt.Key != want || bkt.State != "found" || bkt.Bucket.Tokens != 2 || len(bkt.Bucket.Bandwidths) != 1 || bkt.Bucket.Bandwidths[0].Capacity != 5 {
		t.Errorf("derived %+v, want %s with 2 of 5 tokens", bkt, want)
	}
	var vm struct {
		Secret struct {
			Configured  bool
			From        string
			Fingerprint string
		}
		Inventory struct {
			Generations []struct {
				Fingerprint string
				Keys        int64
				Current     *bool
			}
		}
	}
	if code := getJSON(t, f.srv.URL+"/c/vertique/vertique", &vm); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	g := vm.Inventory.Generations
	if len(g) != 2 || g[0].Current == nil || !*g[0].Current || g[0].Fingerprint != vertique.Fingerprint([]byte(vtSecret)) || g[0].Keys != 1 || g[1].Current == nil || *g[1].Current || g[1].Keys != 1 {
		t.Errorf("generations %+v", g)
	}
	if !vm.Secret.Configured || !strings.Contains(vm.Secret.From, "environment variable VT_SECRET") {
		t.Errorf("secret source %+v", vm.Secret)
	}
	if code, _, _ := get(t, f.srv.URL+"/c/vertique/vertique?policy=x"); code != http.StatusBadRequest {
		t.Errorf("a lookup without a revision: %d, want 400", code)
	}
}

func TestVertiqueLookupWithoutSecret(t *testing.T) {
	t.Parallel()
	f, _ := opsConsole(t, nil)
	code, _, body := get(t, f.srv.URL+"/c/vertique/vertique?policy=login-attempts&revision=3&key=5%3Aalice%2C")
	if code != http.StatusOK || !strings.Contains(body, `data-testid="vt-missing"`) || !strings.Contains(body, "--vertique-secret-env") {
		t.Errorf("without a secret: %d %.800s", code, body)
	}
	if strings.Contains(body, `data-testid="vt-derived"`) {
		t.Error("a key was derived without a secret")
	}
}

// With Redis down, each page says so and claims nothing about the data.
func TestOpsPagesWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	f, rs := opsConsole(t, []byte(vtSecret))
	// Read once while up, so the walker has rows to show as old ones.
	if code, _, _ := get(t, f.srv.URL+"/c/gateway/quotas"); code != http.StatusOK {
		t.Fatal(code)
	}
	rs.Stop()
	waitFor(t, "the monitor sees redis down", func() bool { return !f.reg.All()[1].Status().Up })
	for _, tt := range []struct{ path, want string }{
		{"/c/gateway/quotas", `data-testid="disconnected"`},
		{"/c/eisland/quotas", "Redis is unreachable"},
		{"/c/gateway/gateway/key?id=gk_a", `data-testid="gwkey-error"`},
		{"/c/vertique/vertique", `data-testid="vt-error"`},
	} {
		code, _, body := get(t, f.srv.URL+tt.path)
		if code != http.StatusOK || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d, want 200 with %s: %.600s", tt.path, code, tt.want, body)
		}
		if strings.Contains(body, vtSecret) {
			t.Errorf("%s shows the secret", tt.path)
		}
	}
	// The gateway key page claims no empty state it did not read.
	_, _, body := get(t, f.srv.URL+"/c/gateway/gateway/key?id=gk_a")
	if strings.Contains(body, "No keys for this id") {
		t.Error("a page that read nothing says the id has no keys")
	}
}

// The gateway key and vertique bucket topics push the state as it changes;
// a vertique topic naming a key of another family is refused.
func TestOpsTopicsPushChanges(t *testing.T) {
	t.Parallel()
	f, rs := opsConsole(t, []byte(vtSecret))
	ctx := context.Background()
	dial := func(topic string) *websocket.Conn {
		t.Helper()
		u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + route.LiveURL(topic)
		ws, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {f.srv.URL}})
		if err != nil {
			t.Fatalf("dial %s: %v (%+v)", topic, err, res)
		}
		t.Cleanup(func() { ws.Close() })
		return ws
	}
	waitFrame := func(ws *websocket.Conn, want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		last := ""
		for time.Now().Before(deadline) {
			_ = ws.SetReadDeadline(deadline)
			_, msg, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("read: %v (last frame %.300s)", err, last)
			}
			if last = string(msg); strings.Contains(last, want) {
				return
			}
		}
		t.Fatalf("no frame with %q; last %.500s", want, last)
	}
	gm := time.Now().UTC().Format("200601")
	ws := dial(handlers.GatewayKeyTopic{Conn: "gateway", ID: "gk_a"}.String())
	waitFrame(ws, "123,456")
	rs.Client(0).IncrBy(ctx, "q:tokens:gk_a:"+gm, 1000)
	waitFrame(ws, "124,456")

	fam, _ := vertique.Family(schema.BuiltinPack("vertique"))
	key, _ := vertique.Key(fam, []byte(vtSecret), "login-attempts", "3", vertique.CanonicalKey("alice"))
	vt := dial(handlers.VertiqueBucketTopic{Conn: "vertique", Key: key}.String())
	waitFrame(vt, "2 of 5 tokens now")
	rs.Client(0).Del(ctx, key)
	waitFrame(vt, "No bucket at this key")

	// The inventory by generation is a topic too: its frame swaps the
	// page's inventory, and a connection without the family has none.
	inv := dial(handlers.VertiqueInventoryTopic{Conn: "vertique"}.String())
	_ = inv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, frame, err := inv.ReadMessage(); err != nil || !strings.Contains(string(frame), `id="vt-inventory-live" hx-swap-oob="true"`) ||
		!strings.Contains(string(frame), vertique.Fingerprint([]byte(vtSecret))) {
		t.Fatalf("inventory frame %.300s (%v): want the swapped inventory with the current fingerprint", frame, err)
	}
	if _, _, body := get(t, f.srv.URL+route.VertiqueURL("vertique")); !strings.Contains(body, `ws-connect="/ws?topic=vtinventory%3Avertique"`) {
		t.Error("the vertique page does not watch its inventory")
	}
	if code, _, _ := get(t, f.srv.URL+route.LiveURL(handlers.VertiqueInventoryTopic{Conn: "gateway"}.String())); code != http.StatusNotFound {
		t.Errorf("an inventory topic on a connection without vertique buckets: %d, want 404", code)
	}

	u := f.srv.URL + route.LiveURL(handlers.VertiqueBucketTopic{Conn: "vertique", Key: "cfg:routing:version"}.String())
	if code, _, _ := get(t, u); code != http.StatusNotFound {
		t.Errorf("a vertique topic on another family's key: %d, want 404", code)
	}
}

// Redis load does not grow with viewers: ten viewers of the quotas page
// cost what one does (one walker per connection, one poller per topic that
// only renders its snapshot).
func TestQuotasLoadDoesNotGrowWithViewers(t *testing.T) {
	t.Parallel()
	f, rs := opsConsole(t, nil)
	// dial opens a viewer and waits for its first frame: the walker runs.
	dial := func() {
		u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + route.LiveURL(handlers.QuotasTopic{Conn: "gateway"}.String())
		ws, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {f.srv.URL}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		if _, _, err := ws.ReadMessage(); err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
	}
	dial()
	one := rs.CountDuring(t, "getrange", time.Second)
	for range 9 {
		dial()
	}
	ten := rs.CountDuring(t, "getrange", time.Second)
	t.Logf("GETRANGE calls in 1 s (ten walker steps): %d with one viewer, %d with ten", one, ten)
	if one == 0 || ten > 2*one {
		t.Errorf("GETRANGE calls in 1 s: %d with one viewer, %d with ten; want about the same", one, ten)
	}
}
