package handlers

import (
	"net/http/httptest"
	"testing"
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
