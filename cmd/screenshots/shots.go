package main

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// A shot is one picture the docs show: a page of the demo at a width.
type shot struct {
	Name  string // the file's name before -light.png / -dark.png
	Path  string // the page, or "" when Find finds it
	Phone bool   // 390 px wide, as a phone shows it
	// Find names a page whose first link matching Link (default: a key
	// page's) is the shot's page: the demo's traffic makes keys and bans
	// whose names no one can write down ahead.
	Find string
	Link *regexp.Regexp
}

// shots are the pictures docs/*.md and the README link.
var shots = []shot{
	{Name: "overview", Path: "/c/eisland"},
	{Name: "database", Path: "/c/gateway/db/0"},
	{Name: "key-limit", Find: "/c/eisland/limits"},
	{Name: "key-lock", Find: "/c/eisland/locks"},
	{Name: "leaderboard", Path: "/c/eisland/db/14/leaderboard?k=" + url.QueryEscape("mg:score:leaderboard:2048")},
	{Name: "user-phone", Path: "/c/eisland/user?name=" + url.QueryEscape("ops:admin"), Phone: true},
	{Name: "unlock-preview", Path: "/actions/preview?conn=eisland&db=6&key=" + url.QueryEscape("auth:limit:login:lock:ops:admin") + "&kind=unlock-login"},
	// A banned name in plain letters: an emoji needs a font Chromium may lack.
	{Name: "bans", Find: "/c/eisland/bans", Link: banCheckLink},
	{Name: "limits", Path: "/c/eisland/limits"},
	{Name: "locks", Path: "/c/eisland/locks"},
	{Name: "quotas", Path: "/c/gateway/quotas"},
	{Name: "audit", Path: "/audit"},
	{Name: "slowlog", Path: "/c/eisland/slowlog"},
}

var (
	keyLink      = regexp.MustCompile(`href="(/c/[^"/]+/db/[0-9]+/key\?k=[^"]+)"`)
	banCheckLink = regexp.MustCompile(`href="(/c/[^"/]+/bans\?check=[a-z0-9]+&amp;list=[^"]+)"`)
)

// resolveShots picks the shots only names (all when empty) and fills in
// the paths Find names from the running demo.
func resolveShots(base, only string) ([]shot, error) {
	out := make([]shot, 0, len(shots))
	want, seen := map[string]bool{}, map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	for _, s := range shots {
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		seen[s.Name] = true
		if s.Find != "" {
			link := s.Link
			if link == nil {
				link = keyLink
			}
			p, err := waitLink(base+s.Find, link)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			s.Path = p
		}
		out = append(out, s)
	}
	for n := range want {
		if !seen[n] {
			return nil, fmt.Errorf("no shot named %q", n)
		}
	}
	return out, nil
}

// waitLink asks page until it holds a link matching link: the Rate limits
// and Locks pages answer before their sweep has found the first rows.
func waitLink(page string, link *regexp.Regexp) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := firstLink(page, link)
		if err == nil || time.Now().After(deadline) {
			return p, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func firstLink(page string, link *regexp.Regexp) (string, error) {
	r, err := http.Get(page)
	if err != nil {
		return "", err
	}
	defer r.Body.Close()
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return "", err
	}
	m := link.FindSubmatch(body)
	if m == nil {
		return "", fmt.Errorf("no link like %s on %s (status %d)", link, page, r.StatusCode)
	}
	return html.UnescapeString(string(m[1])), nil
}
