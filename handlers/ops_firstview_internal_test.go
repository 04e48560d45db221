package handlers

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Whether a pack has a family of a kind is the connection's pack's say,
// not the sweep's: before the sweep has taken the pack up (its snapshot
// has none yet, or an older one) the pages say they are reading, never
// that the pack has no rate-limit or lock family.
func TestOpsPagesBeforeTheSweepHasThePack(t *testing.T) {
	t.Parallel()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: "redis://127.0.0.1:1/0"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("eisland"))
	now := time.Now()
	for _, snap := range []limits.Snapshot{
		{},                                  // the sweeper has not run yet
		{Pack: &schema.Pack{Name: "older"}}, // it still walks another pack
	} {
		lv := limitsVM(conn, snap, OpsTopic{Kind: limitsKind, Conn: "main"}, now)
		if strings.Contains(lv.Empty, "No rate-limit family") || lv.Reading == "" {
			t.Errorf("limits with snapshot pack %q: empty %q, reading %q", packName(snap.Pack), lv.Empty, lv.Reading)
		}
		kv := locksVM(conn, snap, OpsTopic{Kind: locksKind, Conn: "main"}, now)
		if strings.Contains(kv.Empty, "No lock family") || kv.Reading == "" {
			t.Errorf("locks with snapshot pack %q: empty %q, reading %q", packName(snap.Pack), kv.Empty, kv.Reading)
		}
	}
	// A pack without the kind says so at once, whatever the sweep holds.
	plain := &schema.Pack{Name: "plain", Families: []*schema.Family{{ID: "page-cache", Role: schema.RoleCache}}}
	conn.ForcePack(plain)
	if lv := limitsVM(conn, limits.Snapshot{}, OpsTopic{Kind: limitsKind, Conn: "main"}, now); !strings.Contains(lv.Empty, "No rate-limit family in this pack (plain)") {
		t.Errorf("plain pack, limits: %q", lv.Empty)
	}
	if kv := locksVM(conn, limits.Snapshot{}, OpsTopic{Kind: locksKind, Conn: "main"}, now); !strings.Contains(kv.Empty, "No lock family in this pack (plain)") {
		t.Errorf("plain pack, locks: %q", kv.Empty)
	}
}

func packName(p *schema.Pack) string {
	if p == nil {
		return "(none)"
	}
	return p.Name
}
