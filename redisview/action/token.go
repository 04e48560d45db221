package action

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"time"
)

// tokenVersion changes whenever the token's meaning does, so a page left
// open across an upgrade fails cleanly instead of executing something else.
// Version 2 carries names byte-exact (see exact) and a nonce (see claim).
const tokenVersion = 2

type token struct {
	V     int              `json:"v"`
	Kind  string           `json:"k"`
	Conn  string           `json:"c"`
	DB    int              `json:"d"`
	Key   exact            `json:"key,omitempty"`
	Args  map[string]exact `json:"a,omitempty"`
	FPs   []string         `json:"f"`
	Made  int64            `json:"t"` // unix ms
	Nonce string           `json:"n"`
}

// newNonce names one preview: its confirmation executes at most once.
func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Token encodes what the confirm step needs (kind, request, fingerprints,
// time, nonce) as URL-safe text. It is neither signed nor encrypted: the
// handler must seal it (authenticated encryption with the session secret)
// before handing it to the browser and open it before ParseToken, or a user
// could swap the request behind a preview, and the page would carry its
// arguments readable (a sensitive board's member, say). Even unsigned, a forged token cannot bypass the role check, the
// audit, the fingerprint comparison, which Execute does from the live
// state, nor run twice.
func (p Preview) Token() string {
	b, _ := json.Marshal(token{V: tokenVersion, Kind: p.Kind, Conn: p.Request.Conn, DB: p.Request.DB,
		Key: exact(p.Request.Key), Args: exactMap(p.Request.Args), FPs: p.Fingerprints, Made: p.Made.UnixMilli(), Nonce: p.Nonce})
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
	if err := json.Unmarshal(b, &t); err != nil || t.V != tokenVersion || t.Kind == "" || t.Nonce == "" {
		return Preview{}, invalidf("malformed or outdated preview token; preview the action again")
	}
	req := Request{Conn: t.Conn, DB: t.DB, Key: string(t.Key), Args: stringMap(t.Args)}
	return Preview{Kind: t.Kind, Request: req, Fingerprints: t.FPs, Made: time.UnixMilli(t.Made), Nonce: t.Nonce}, nil
}
