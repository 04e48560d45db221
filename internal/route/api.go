package route

import (
	"encoding/base64"
	"strings"
)

// The API's paths (/api/v1), in the OpenAPI form the API registers them
// ({param}); the router turns {param} into :param.
const (
	APIPrefix      = "/api/v1"
	APIOpenAPI     = APIPrefix + "/openapi.json"
	APIConnections = APIPrefix + "/connections"
	APIBanCheck    = APIConnections + "/{conn}/ban-check"
	APIUser        = APIConnections + "/{conn}/user"
	APIKey         = APIConnections + "/{conn}/db/{n}/key"
	APILeaderboard = APIConnections + "/{conn}/db/{n}/leaderboard"
	APILimits      = APIConnections + "/{conn}/limits"
	APILocks       = APIConnections + "/{conn}/locks"
	APIQuotas      = APIConnections + "/{conn}/quotas"
	APIBans        = APIConnections + "/{conn}/bans"
	APIDBStats     = APIConnections + "/{conn}/db/{n}/stats"
	APIViolations  = APIConnections + "/{conn}/violations"
	APIAudit       = APIPrefix + "/audit"
	APIOverview    = APIConnections + "/{conn}/overview"
	APIKeys        = APIConnections + "/{conn}/db/{n}/keys"
	APISearch      = APIConnections + "/{conn}/search"
	APIGatewayKey  = APIConnections + "/{conn}/gateway-key"
	APIVertique    = APIConnections + "/{conn}/vertique"
	APIVertiqueBkt = APIVertique + "/bucket"
	APIPreview     = APIPrefix + "/actions/preview"
	APIExecute     = APIPrefix + "/actions/execute"
	APIUndo        = APIPrefix + "/actions/undo"
)

// IsAPI reports a path of the API: its errors are problem details, its
// anonymous requests are refused (401), never sent to sign in.
func IsAPI(path string) bool {
	return path == APIPrefix || strings.HasPrefix(path, APIPrefix+"/")
}

// APIName is a name the API takes in its query: param as sent (bytes:
// percent-encoding carries any), or param_b64, its bytes in base64 —
// standard or URL-safe, padded or not — for a client that holds the name
// as bytes. Exactly one of the two is given (has, has64 say which were
// present); the name is never trimmed. max bounds its length.
func APIName(param, plain string, has bool, b64 string, has64 bool, max int) (string, error) {
	switch {
	case has && has64:
		return "", badParam("Give %s or %s_b64, not both.", param, param)
	case has64:
		raw, ok := decodeB64(b64)
		if !ok {
			return "", badParam("%s_b64 is not base64 (standard or URL-safe, padded or not).", param)
		}
		plain = raw
	case !has:
		return "", badParam("Name it with ?%s= (or ?%s_b64=).", param, param)
	}
	if plain == "" || len(plain) > max {
		return "", badParam("%s is 1 byte to %d bytes long.", param, max)
	}
	return plain, nil
}

// decodeB64 decodes any of the four base64 alphabets. A space is a '+'
// that came unescaped through a query string (base64 has no spaces).
func decodeB64(s string) (string, bool) {
	s = strings.ReplaceAll(s, " ", "+")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.Strict().DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}
