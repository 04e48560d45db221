package handlers

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/route"
)

func TestWantsJSON(t *testing.T) {
	t.Parallel()
	for accept, want := range map[string]bool{
		"":                                false,
		"*/*":                             false,
		"application/json":                true,
		"Application/JSON; charset=utf-8": true,
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": false,
		"application/json, text/html":                                     true,
		"text/html, application/json":                                     false,
		"text/html;q=0.5, application/json":                               true,
		"application/json;q=0":                                            false,
		"text/html, */*; q=0.01":                                          false, // htmx
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", accept)
		if got := wantsJSON(r); got != want {
			t.Errorf("Accept %q: JSON %v, want %v", accept, got, want)
		}
	}
}

func TestViewJSON(t *testing.T) {
	t.Parallel()
	type row struct {
		Name  string
		Score float64
	}
	type vm struct {
		Key    string
		Names  []string
		None   []row
		Rows   []row
		Hidden string `json:"-"`
		Nick   string `json:"nick"`
		Ptr    *row
		inner  string
	}
	long := strings.Repeat("é", route.MaxLinkedName) // 8 KiB of valid UTF-8
	b, err := viewJSON(vm{Key: "conf:\xff", Names: []string{"ok", "<b>&"}, Rows: []row{{"x", 1.5}}, Hidden: "token", Nick: long, inner: "x"})
	if err != nil {
		t.Fatal(err)
	}
	cut := base64.StdEncoding.EncodeToString([]byte(long[:route.MaxLinkedName]))
	want := `{"Key":{"b64":"Y29uZjr/"},"Names":["ok","\u003cb\u003e\u0026"],"None":[],"Rows":[{"Name":"x","Score":1.5}],` +
		`"nick":{"b64":"` + cut + `","bytes":8192},"Ptr":null}`
	if string(b) != want {
		t.Errorf("viewJSON =\n%s\nwant\n%s", b, want)
	}
	if !json.Valid(b) {
		t.Error("not valid JSON")
	}
}
