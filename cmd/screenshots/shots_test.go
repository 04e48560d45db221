package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Shots found on a page take its first matching link, HTML-unescaped; -only
// keeps the shots it names and refuses a name no shot has.
func TestResolveShots(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/c/eisland/limits":
			_, _ = w.Write([]byte(`<a href="/c/eisland/audit">x</a><a href="/c/eisland/db/4/key?k=a%3Ab&amp;at=0">k</a><a href="/c/eisland/db/5/key?k=z">z</a>`))
		case "/c/eisland/bans":
			_, _ = w.Write([]byte(`<a href="/c/eisland/bans?check=%F0%9F%A6%8Afox&amp;list=l">f</a><a href="/c/eisland/bans?check=anna842&amp;list=user-ban-bloom">a</a>`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	got, err := resolveShots(srv.URL, "key-limit, bans,overview")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for _, s := range got {
		paths[s.Name] = s.Path
	}
	want := map[string]string{
		"overview":  "/c/eisland",
		"key-limit": "/c/eisland/db/4/key?k=a%3Ab&at=0",
		"bans":      "/c/eisland/bans?check=anna842&list=user-ban-bloom",
	}
	if len(paths) != len(want) {
		t.Fatalf("got %v, want %v", paths, want)
	}
	for n, p := range want {
		if paths[n] != p {
			t.Errorf("%s: path %q, want %q", n, paths[n], p)
		}
	}
	if _, err := resolveShots(srv.URL, "overveiw"); err == nil {
		t.Error("an unknown shot name was not refused")
	}
	if all, err := resolveShots(srv.URL, "overview,database"); err != nil || len(all) != 2 {
		t.Errorf("two named shots: %d, %v", len(all), err)
	}
}
