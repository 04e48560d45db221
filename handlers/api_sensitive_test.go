package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A key of a sensitive family answers its metadata and nothing of its
// value, on the key and the user endpoints alike.
func TestAPINeverSendsSensitiveValues(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	const secret = "JBSWY3DPEHPK3PXPSECRETSECRET"
	key := "totp:security:secret:plain:alice.w"
	f.redis.Client(5).Set(context.Background(), key, secret, time.Minute)
	c := newAPIClient(t, f)
	var k struct {
		Sensitive bool
		Decoded   *struct{ Withheld bool }
		Value     struct{ Withheld bool }
	}
	body := c.getJSON("/api/v1/connections/main/db/5/key"+q("key", key), http.StatusOK, &k)
	if !k.Sensitive || !k.Value.Withheld || k.Decoded == nil || !k.Decoded.Withheld {
		t.Errorf("sensitive key not withheld: %s", body)
	}
	user := c.getJSON("/api/v1/connections/main/user"+q("name", "alice.w"), http.StatusOK, nil)
	for what, b := range map[string][]byte{"key": body, "user": user} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the %s endpoint sent the secret: %s", what, b)
		}
	}
	var u struct {
		Keys []struct {
			Key       string
			Sensitive bool
		}
	}
	_ = json.Unmarshal(user, &u)
	found := false
	for _, uk := range u.Keys {
		found = found || uk.Key == key && uk.Sensitive
	}
	if !found {
		t.Errorf("the user view does not list the sensitive key as such: %s", user)
	}
}
