package views

import "encoding/json"

// csrfHeaders makes htmx send the CSRF token with every request it issues.
func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}
