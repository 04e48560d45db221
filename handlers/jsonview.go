package handlers

import (
	"net/http"
	"strconv"
	"strings"
)

// A page asked for JSON answers its API twin's answer (pageJSON), or a
// 406 problem naming where its data is in the API: never its view model.

// wantsJSON reports a request that prefers JSON to HTML: application/json
// is accepted with a higher quality than text/html, or as high and listed
// first. Browsers and htmx never send it.
func wantsJSON(r *http.Request) bool {
	jsonQ, htmlQ := -1.0, -1.0
	jsonAt, htmlAt := -1, -1
	for i, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/json":
			if q > jsonQ {
				jsonQ, jsonAt = q, i
			}
		case "text/html":
			if q > htmlQ {
				htmlQ, htmlAt = q, i
			}
		}
	}
	return jsonQ > 0 && (jsonQ > htmlQ || jsonQ == htmlQ && jsonAt < htmlAt)
}
