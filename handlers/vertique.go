package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// VertiqueSecret is rateLimit.keyDerivation.secret, given on the command
// line by the name of an environment variable or a file. It is never shown,
// logged or put in JSON: only its fingerprint (which every bucket key
// carries anyway) is.
type VertiqueSecret struct {
	Secret []byte
	// From says where it came from, for the page: "environment variable
	// X", "file Y", or the demo's.
	From string
	Demo bool // the embedded demo's own secret
}

// String never prints the secret.
func (s VertiqueSecret) String() string { return "VertiqueSecret(" + s.From + ")" }

// GoString never prints the secret either (%#v).
func (s VertiqueSecret) GoString() string { return s.String() }

// maxLookupField bounds each field of the lookup form.
const maxLookupField = 1024

// vertiquePage shows the bucket inventory by key generation and finds one
// caller's bucket. A connection whose pack has no Bucket4j family gets the
// page with an empty state (the sub-navigation offers it on every
// connection); a malformed lookup is a 400.
func (a *App) vertiquePage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	q := c.QueryParams()
	lk := views.VertiqueLookupVM{Policy: q.Get("policy"), Revision: q.Get("revision"), Key: q.Get("key"), Parts: q.Get("enc") == "parts"}
	for _, v := range []string{lk.Policy, lk.Revision, lk.Key} {
		if len(v) > maxLookupField {
			return fmt.Errorf("%w: a lookup field longer than %d bytes", route.ErrParam, maxLookupField)
		}
	}
	// The finder derives a key with the secret: an HMAC oracle for whoever
	// may use it, so it is for support and up.
	finder := actor(c).Level.Allows(action.Support)
	if !finder && (lk.Policy != "" || lk.Revision != "" || lk.Key != "" || lk.Parts) {
		return fmt.Errorf("%w: %s", action.ErrForbidden, vertiqueFinderRole)
	}
	vm := views.VertiqueVM{Conn: conn.Name, FormURL: route.VertiqueURL(conn.Name), Lookup: lk}
	if !finder {
		vm.FinderNote = vertiqueFinderRole
	}
	a.vertiqueSecretVM(&vm)
	f, err := vertique.Family(conn.Pack())
	if err != nil {
		vm.NoFamily = "This connection's pack has no Bucket4j family keyed by a secret fingerprint and an HMAC, so it holds no vertique buckets Keydeck knows of."
		return render(c, http.StatusOK, vm, views.VertiquePage(a.page(c, "vertique · "+conn.Name, conn.Name), vm))
	}
	ctx := c.Request().Context()
	a.vertiqueInventory(ctx, conn, f, &vm)
	vm.InventoryWSURL = route.LiveURL(VertiqueInventoryTopic{Conn: conn.Name}.String())
	if lk.Policy != "" || lk.Revision != "" || lk.Key != "" {
		if lk.Policy == "" || lk.Revision == "" {
			return fmt.Errorf("%w: a lookup needs a policy name and a revision", route.ErrParam)
		}
		if len(a.vertique.Secret) == 0 {
			vm.Lookup.Missing = "Keydeck was not given the secret, so it cannot derive a bucket key. " + secretHowTo
		} else {
			canon := lk.Key
			if lk.Parts {
				canon = vertique.CanonicalKey(strings.Split(strings.ReplaceAll(lk.Key, "\r\n", "\n"), "\n")...)
			}
			key, err := vertique.Key(f, a.vertique.Secret, lk.Policy, lk.Revision, canon)
			if err != nil {
				return fmt.Errorf("%w: %v", route.ErrParam, err)
			}
			db := vertiqueDB(f)
			vm.Lookup.Derived = &views.VertiqueDerivedVM{Key: key, Href: keyHref(conn.Name, db, key),
				WSURL: route.LiveURL(VertiqueBucketTopic{Conn: conn.Name, DB: db, Key: key}.String())}
			vm.Lookup.Derived.State = vertiqueBucketVM(ctx, conn, f, db, key, a)
		}
	}
	return render(c, http.StatusOK, vm, views.VertiquePage(a.page(c, "vertique · "+conn.Name, conn.Name), vm))
}

// vertiqueFinderRole says why a viewer may not find a caller's bucket.
const vertiqueFinderRole = "Finding a caller's bucket derives its key with vertique's secret (an HMAC of what is typed), so it is for support and admin; your role, viewer, may read the inventory and any key's page."

// vertiqueInventory fills vm's inventory, or says why it is not known. The
// walk is cached (vtInventory), so the page and its topic's every tick
// cost Redis one walk every 10 s whatever the viewers.
func (a *App) vertiqueInventory(ctx context.Context, conn *redisview.Conn, f *schema.Family, vm *views.VertiqueVM) {
	current := ""
	if len(a.vertique.Secret) > 0 {
		current = vertique.Fingerprint(a.vertique.Secret)
	}
	if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
		vm.Err = "Redis is unreachable — " + statusText(st) + ": the buckets are not known."
	} else if inv, err := a.vtInventory.Get(ctx, conn, f, current, a.now()); err != nil {
		vm.Err = "Cannot walk the buckets: " + conn.SafeErr(err)
	} else {
		vm.Inventory = inventoryVM(inv)
	}
}

// VertiqueInventory is what the vertique page needs of the cached bucket
// walks (vertique.Cache, built by the composition root).
type VertiqueInventory interface {
	Get(ctx context.Context, conn *redisview.Conn, f *schema.Family, current string, now time.Time) (vertique.Inventory, error)
}

const vertiqueInventoryKind = "vtinventory"

// VertiqueInventoryTopic is a connection's vertique bucket inventory:
// "vtinventory:NAME".
type VertiqueInventoryTopic struct{ Conn string }

func (t VertiqueInventoryTopic) String() string    { return vertiqueInventoryKind + ":" + t.Conn }
func (VertiqueInventoryTopic) Level() action.Level { return action.Viewer }

func parseVertiqueInventoryTopic(arg string) (Topic, error) {
	if !redisview.ValidName(arg) {
		return nil, ErrUnknownTopic
	}
	return VertiqueInventoryTopic{Conn: arg}, nil
}

func (t VertiqueInventoryTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	f, err := vertique.Family(conn.Pack())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrUnknownTopic, t.String(), err)
	}
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			vm := views.VertiqueVM{Conn: conn.Name}
			a.vertiqueInventory(ctx, conn, f, &vm)
			return renderBytes(ctx, views.VertiqueInventoryLive(vm, true))
		})
	}, nil
}

const secretHowTo = "Start Keydeck with --vertique-secret-env NAME (an environment variable holding it) or --vertique-secret-file PATH; the secret is never shown, logged or sent."

func (a *App) vertiqueSecretVM(vm *views.VertiqueVM) {
	switch {
	case len(a.vertique.Secret) == 0:
		vm.Secret = "No secret configured: the inventory cannot tell the current generation, and the lookup cannot derive keys. " + secretHowTo
	case a.vertique.Demo:
		vm.Secret = "Using the embedded demo's own secret (it protects nothing: the demo's data is synthetic). Its fingerprint is " + vertique.Fingerprint(a.vertique.Secret) + "."
		vm.HasSecret, vm.DemoExample = true, true
	default:
		vm.Secret = "Secret from " + a.vertique.From + "; its fingerprint is " + vertique.Fingerprint(a.vertique.Secret) + "."
		vm.HasSecret = true
	}
}

// vertiqueDB is the database the family's keys are read in: its first, or
// 0 for a family of any database.
func vertiqueDB(f *schema.Family) int {
	if len(f.DBs) > 0 {
		return f.DBs[0]
	}
	return 0
}

func inventoryVM(inv vertique.Inventory) *views.VertiqueInventoryVM {
	v := &views.VertiqueInventoryVM{Pattern: inv.Family.Pattern.String(), Read: format.Clock(inv.Read)}
	if inv.Complete {
		v.Label = "Every bucket: a complete walk of " + format.Plural(inv.Seen, "key", "keys") + " in " + format.Plural(int64(inv.Scans), "SCAN call", "SCAN calls") + "."
	} else {
		v.Label = "Partial: the walk stopped at its budget of " + format.Plural(int64(inv.Scans), "SCAN call", "SCAN calls") + " (" + format.Plural(inv.Seen, "key", "keys") + " read); counts are at least these."
	}
	for _, g := range inv.Generations {
		gv := views.VertiqueGenVM{Fingerprint: g.Fingerprint, Current: g.Current, Keys: format.Count(g.Keys), MaxTTL: format.TTL(g.MaxTTL)}
		switch {
		case g.MemKeys == g.Keys:
			gv.Memory = format.Bytes(g.Memory)
		case g.MemKeys == 0:
			gv.Memory = "not known (MEMORY USAGE refused)"
		default:
			gv.Memory = "≥ " + format.Bytes(g.Memory) + " (" + format.Count(g.MemKeys) + " keys measured)"
		}
		switch {
		case g.Current:
			gv.Status = "current secret"
		case inv.HasCurrent:
			gv.Status = "older generation: unreachable, waiting for its TTL (at most " + format.TTL(g.MaxTTL) + " left)"
		default:
			gv.Status = "generation not known (no secret configured)"
		}
		if g.NoTTL > 0 {
			gv.Status += "; " + format.Plural(g.NoTTL, "key", "keys") + " without a TTL will never expire"
		}
		v.Generations = append(v.Generations, gv)
	}
	return v
}

// vertiqueBucketVM decodes the derived key's Bucket4j state.
func vertiqueBucketVM(ctx context.Context, conn *redisview.Conn, f *schema.Family, db int, key string, a *App) views.DecodedVM {
	d := keyDecoded(ctx, conn, db, key, f.Type, schema.Match{Family: f}, a.now())
	if strings.Contains(d.Note, "the key is gone") {
		d.Note = "No bucket at this key: the caller has not been limited by this policy within the bucket's TTL (or the policy, revision or key differ from what the application uses)."
	}
	return d
}

const vertiqueKind = "vtbucket"

// VertiqueBucketTopic is one derived bucket's decoded state:
// "vtbucket:conn=NAME&db=N&key=KEY" (the derived key, never the secret).
type VertiqueBucketTopic struct {
	Conn string
	DB   int
	Key  string
}

func (t VertiqueBucketTopic) String() string {
	return vertiqueKind + ":" + url.Values{"conn": {t.Conn}, "db": {strconv.Itoa(t.DB)}, "key": {t.Key}}.Encode()
}
func (VertiqueBucketTopic) Level() action.Level { return action.Viewer }

func parseVertiqueTopic(arg string) (Topic, error) {
	q, err := url.ParseQuery(arg)
	if err != nil {
		return nil, err
	}
	db, err := route.ParseDB(q.Get("db"))
	if err != nil {
		return nil, err
	}
	t := VertiqueBucketTopic{Conn: q.Get("conn"), DB: db, Key: q.Get("key")}
	if !redisview.ValidName(t.Conn) || t.Key == "" || len(t.Key) > maxLookupField {
		return nil, ErrUnknownTopic
	}
	return t, nil
}

// source decodes the key only when it is a bucket of the pack's Bucket4j
// family: the topic is no general key reader.
func (t VertiqueBucketTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	f, err := vertique.Family(conn.Pack())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrUnknownTopic, t.String(), err)
	}
	if m, ok := conn.Classifier().Match(t.DB, t.Key); !ok || m.Family != f || f.Sensitive {
		return nil, fmt.Errorf("%w %q: not a vertique bucket", ErrUnknownTopic, t.String())
	}
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			return renderBytes(ctx, views.VertiqueBucketLive(vertiqueBucketVM(ctx, conn, f, t.DB, t.Key, a), true))
		})
	}, nil
}
