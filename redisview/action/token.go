package action

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// tokenVersion changes whenever the token's meaning does, so a page left
// open across an upgrade fails cleanly instead of executing something else.
const tokenVersion = 1

type token struct {
	V    int      `json:"v"`
	Kind string   `json:"k"`
	Req  Request  `json:"r"`
	FPs  []string `json:"f"`
	Made int64    `json:"t"` // unix ms
}

// Token encodes what the confirm step needs (kind, request, fingerprints,
// time) as URL-safe text. It is not signed: the handler must sign it (HMAC
// with the session secret) before handing it to the browser and verify it
// before ParseToken, or a user could swap the request behind a preview.
// Even unsigned, a forged token cannot bypass the role check, the audit,
// or the fingerprint comparison, which Execute does from the live state.
func (p Preview) Token() string {
	b, _ := json.Marshal(token{V: tokenVersion, Kind: p.Kind, Req: p.Request, FPs: p.Fingerprints, Made: p.Made.UnixMilli()})
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseToken reverses Token. The Preview it returns holds only what
// Execute needs; describe it again with Runner.Preview to show it.
func ParseToken(s string) (Preview, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Preview{}, invalidf("malformed preview token")
	}
	var t token
	if err := json.Unmarshal(b, &t); err != nil || t.V != tokenVersion || t.Kind == "" {
		return Preview{}, invalidf("malformed or outdated preview token; preview the action again")
	}
	return Preview{Kind: t.Kind, Request: t.Req, Fingerprints: t.FPs, Made: time.UnixMilli(t.Made)}, nil
}
