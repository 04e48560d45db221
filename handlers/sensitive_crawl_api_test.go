package handlers_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// sensAPIURLs are the JSON API's reads (and /metrics) for the planted
// keys: every family, every connection, the crawl's user — the API and the
// metrics go through the same sensitive guard as the pages.
func sensAPIURLs(planted []sensKey) []string {
	var out []string
	add := func(u string) {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	add("/api/v1/connections")
	add("/api/v1/audit")
	add("/metrics")
	user := url.QueryEscape(sensUser)
	for _, k := range planted {
		c := "/api/v1/connections/" + url.PathEscape(k.Conn)
		for _, p := range []string{"/overview", "/limits", "/locks", "/quotas", "/bans", "/vertique", "/user?name=" + user, "/ban-check?name=" + user, "/search?q=" + user} {
			add(c + p)
		}
		kb := url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(k.Key)))
		db := fmt.Sprintf("%s/db/%d", c, k.DB)
		add(db + "/stats")
		add(db + "/keys?family=" + url.QueryEscape(k.Family.ID))
		add(db + "/key?key_b64=" + kb)
		if k.Type == "zset" {
			add(db + "/leaderboard?key_b64=" + kb + "&start=0&count=50")
		}
	}
	return out
}

// crawlAPI opens every API URL and checks its answer for markers; it
// reports how many answered 200.
func (c *sensCrawl) crawlAPI(planted []sensKey) int {
	ok := 0
	for _, u := range sensAPIURLs(planted) {
		code, _, body := c.b.do(http.MethodGet, u, nil, "Accept", "application/json")
		c.check("GET "+u, body)
		if code == http.StatusOK {
			ok++
		}
	}
	return ok
}
