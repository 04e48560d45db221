package main

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"time"
)

// A shot is one picture the docs show: a page of the demo at a width.
type shot struct {
	Name  string // the file's name before -light.png / -dark.png
	Path  string // the page, or "" when Find finds it
	Phone bool   // 390 px wide, as a phone shows it
	// Find names a page whose first key link is the shot's page (keys
	// the demo's traffic makes have names no one can write down ahead).
	Find string
}

// shots are the pictures docs/*.md and the README link.
var shots = []shot{
	{Name: "overview", Path: "/c/eisland"},
	{Name: "database", Path: "/c/gateway/db/0"},
	{Name: "key-limit", Find: "/c/eisland/limits"},
	{Name: "key-lock", Find: "/c/eisland/locks"},
	{Name: "leaderboard", Path: "/c/eisland/db/14/leaderboard?k=" + url.QueryEscape("mg:score:leaderboard:2048")},
	{Name: "user-phone", Path: "/c/eisland/user?name=" + url.QueryEscape("ops:admin"), Phone: true},
	{Name: "bans", Path: "/c/eisland/bans?check=" + url.QueryEscape("🦊fox")},
	{Name: "limits", Path: "/c/eisland/limits"},
	{Name: "locks", Path: "/c/eisland/locks"},
	{Name: "quotas", Path: "/c/gateway/quotas"},
	{Name: "audit", Path: "/audit"},
	{Name: "slowlog", Path: "/c/eisland/slowlog"},
}

var keyLink = regexp.MustCompile(`href="(/c/[^"/]+/db/[0-9]+/key\?k=[^"]+)"`)

// resolveShots fills in the paths Find names from the running demo.
func resolveShots(base string) ([]shot, error) {
	out := make([]shot, 0, len(shots))
	for _, s := range shots {
		if s.Find != "" {
			p, err := waitKeyLink(base + s.Find)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			s.Path = p
		}
		out = append(out, s)
	}
	return out, nil
}

// waitKeyLink asks page until it lists a key: the Rate limits and Locks
// pages answer before their sweep has found the first rows.
func waitKeyLink(page string) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := firstKeyLink(page)
		if err == nil || time.Now().After(deadline) {
			return p, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func firstKeyLink(page string) (string, error) {
	r, err := http.Get(page)
	if err != nil {
		return "", err
	}
	defer r.Body.Close()
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return "", err
	}
	m := keyLink.FindSubmatch(body)
	if m == nil {
		return "", fmt.Errorf("no key link on %s (status %d)", page, r.StatusCode)
	}
	return html.UnescapeString(string(m[1])), nil
}
