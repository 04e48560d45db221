package stats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// A key the server would not let Keydeck read is not "absent": the error
// says what happened (permission denied, authentication failed).
func TestInspectKeyReportsReadErrors(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	admin := rs.Client(0)
	if err := admin.Do(ctx, "acl", "setuser", "narrow", "on", ">pw", "~acl:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	admin.Set(ctx, "outside", "v", 0)
	admin.Set(ctx, "acl:inside", "v", 0)
	for _, c := range []struct {
		url, key, want string
	}{
		{fmt.Sprintf("redis://narrow:pw@%s/0", rs.Addr), "outside", "not permitted"},
		{fmt.Sprintf("redis://narrow:pw@%s/0", rs.Addr), "definitely-not-there", "not permitted"},
		{fmt.Sprintf("redis://narrow:wrong@%s/0", rs.Addr), "acl:inside", "authentication failed"},
	} {
		conn := openConn(t, c.url)
		_, _, err := InspectKey(ctx, conn, 0, c.key)
		if err == nil || !errors.Is(err, redisview.ErrRead) {
			t.Fatalf("%s %s: err %v, want redisview.ErrRead", c.url, c.key, err)
		}
		if got := err.Error(); !strings.Contains(got, c.want) {
			t.Fatalf("%s: %q does not say %q", c.key, got, c.want)
		}
	}
	conn := openConn(t, fmt.Sprintf("redis://narrow:pw@%s/0", rs.Addr))
	info, _, err := InspectKey(ctx, conn, 0, "acl:inside")
	if err != nil || info.Type != "string" {
		t.Fatalf("allowed key: %+v %v", info, err)
	}
	info, _, err = InspectKey(ctx, conn, 0, "acl:gone")
	if err != nil || info.Type != "" {
		t.Fatalf("absent allowed key: %+v %v", info, err)
	}
}
