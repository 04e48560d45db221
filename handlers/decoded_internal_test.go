package handlers

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// A sensitive family of a decodable role says so without reading Redis
// (the nil connection would panic); a role without a decoder shows nothing.
func TestKeyDecodedSensitive(t *testing.T) {
	m := schema.Match{Family: &schema.Family{ID: "x", Type: "hash", Role: schema.RoleTokenBucket, Sensitive: true, Params: &schema.TokenBucketParams{Capacity: 1}}}
	vm := keyDecoded(context.Background(), nil, 0, "k", "hash", m, time.Now())
	if !vm.Withheld || vm.Summary != "" || len(vm.Rows) != 0 || vm.Role != "token-bucket" {
		t.Fatalf("sensitive bucket: %+v", vm)
	}
	m.Family = &schema.Family{ID: "c", Type: "string", Role: schema.RoleCache}
	if vm := keyDecoded(context.Background(), nil, 0, "k", "string", m, time.Now()); vm.Role != "" {
		t.Fatalf("cache: %+v", vm)
	}
}
