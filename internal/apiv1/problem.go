package apiv1

import (
	"net/http"
	"strings"
)

// Problem is an RFC 9457 problem detail, the body of every error the API
// answers (application/problem+json). Status and Title are the pages' for
// the same error (one error table); Type names the problem, so a script
// can tell "no such key" from "no such connection" (both 404) without
// reading the words.
type Problem struct {
	Type   string `json:"type" doc:"Names the problem: urn:keydeck:problem: and its title in lower case, words joined by '-' (urn:keydeck:problem:no-such-key)."`
	Title  string `json:"title" doc:"A short summary of the problem type; the same for every occurrence."`
	Status int    `json:"status" doc:"The HTTP status code, the same the pages answer for this error."`
	Detail string `json:"detail" doc:"What happened this time, in words for a person."`
}

// NewProblem is a problem of status with title and detail.
func NewProblem(status int, title, detail string) *Problem {
	if title == "" {
		title = http.StatusText(status)
	}
	return &Problem{Type: ProblemType(title), Title: title, Status: status, Detail: detail}
}

// ProblemType is the type URI of a problem titled title.
func ProblemType(title string) string {
	var b strings.Builder
	b.WriteString("urn:keydeck:problem:")
	dash := false
	for _, r := range strings.ToLower(title) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		switch {
		case ok:
			if dash && b.Len() > len("urn:keydeck:problem:") {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
	}
	return b.String()
}

// Error is the detail.
func (p *Problem) Error() string { return p.Detail }

// GetStatus is the response's status (huma.StatusError).
func (p *Problem) GetStatus() int { return p.Status }

// ContentType makes a JSON problem application/problem+json
// (huma.ContentTypeFilter).
func (p *Problem) ContentType(ct string) string {
	if ct == "application/json" {
		return "application/problem+json"
	}
	return ct
}
