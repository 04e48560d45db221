package handlers

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
)

// Names are bytes: a key name or member comes back exactly from the key
// page's links and forms and from a signed confirmation token.
func FuzzNamesRoundTripPages(f *testing.F) {
	for _, s := range []string{"k", "conf:\xff", "conf:\xEF\xBF\xBD", "\x00 %&=+#?", `"><script>x</script>`, "ünï:cødé", "a b/c"} {
		f.Add(s)
	}
	s := people.NewSigner([]byte("0123456789abcdef0123456789abcdef-fuzz"))
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" {
			return
		}
		if u, err := url.Parse(route.KeyURL("main", 3, name)); err != nil || u.Query().Get("k") != name {
			t.Fatalf("key link lost %q", name)
		}
		var b strings.Builder
		vm := views.KeyVM{Conn: "main", DB: 3, Key: name, Exists: true, PreviewURL: route.Action{Conn: "main", DB: 3, Key: name}.PreviewURL(),
			Actions: []views.ActionForm{{Kind: "delete-key", Title: "Delete key"}}}
		if err := views.KeyPage(views.Page{CSRF: "t"}, vm).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		formAction, _ := doc.Find(`[data-testid="action-delete-key"]`).Attr("action")
		u, err := url.Parse(formAction)
		if err != nil || u.Query().Get("key") != name || u.Query().Get("db") != "3" {
			t.Fatalf("form lost %q: %q", name, formAction)
		}
		pv := action.Preview{Kind: "remove-leaderboard-entry", Request: action.Request{Conn: "main", DB: 3, Key: name, Args: map[string]string{"member": name}},
			Fingerprints: []string{"absent"}, Made: time.Now(), Nonce: "n"}
		raw, err := s.Unseal("action", s.Seal("action", []byte(pv.Token())))
		if err != nil {
			t.Fatal(err)
		}
		back, err := action.ParseToken(string(raw))
		if err != nil || back.Request.Key != name || back.Request.Args["member"] != name {
			t.Fatalf("token lost %q: %+v %v", name, back.Request, err)
		}
	})
}
