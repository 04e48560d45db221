package schema

// RoleResponseCache: a cached response body served as it is, for the
// lifetime its route gives (the gateway's cache:exact:{ns}:{hash}, seed
// 003: "String (JSON response body)", TTL "route TTL").
const RoleResponseCache Role = "response-cache"

// ResponseCacheParams: role response-cache.
type ResponseCacheParams struct {
	// Content is what the body is: "json" (the default: a body that does
	// not parse is shown as broken) or "text".
	Content string `yaml:"content"`
}

// Check validates the params and fills defaults.
func (p *ResponseCacheParams) Check(*Family) error {
	if p.Content == "" {
		p.Content = "json"
	}
	return oneOf("content", p.Content, "json", "text")
}

func init() {
	RegisterRole(RoleResponseCache, RoleSpec{Types: []string{"string"}, Params: func() Params { return &ResponseCacheParams{} }})
}
