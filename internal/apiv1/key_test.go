package apiv1

import (
	"strings"
	"testing"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A reader answering another role's state is an error worded for the
// API's readers: no Go type name reaches the JSON.
func TestDecodedErrorNamesNoGoType(t *testing.T) {
	f := &schema.Family{ID: "c", Type: "string", Role: schema.RoleCounter}
	d := DecodedOf(f, "string", true, decode.Result{Role: schema.RoleCounter, State: &decode.Lock{}}, "")
	if d == nil || d.Error == "" || d.State != nil {
		t.Fatalf("a counter read as a lock: %+v, want an error", d)
	}
	if strings.Contains(d.Error, "decode.") || strings.Contains(d.Error, "*") {
		t.Fatalf("the error names a Go type: %q", d.Error)
	}
}
