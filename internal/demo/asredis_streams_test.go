package demo

import (
	"strings"
	"testing"
)

func TestAsRedisStreams(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		s := "s" + string(rune('0'+proto))
		both(d, r, "XADD", s, "1-1", "a", "1")
		both(d, r, "XADD", s, "2-1", "b", "2")
		both(d, r, "XADD", s, "3-1", "c", "3")
		both(d, r, "XGROUP", "CREATE", s, "g1", "0")
		both(d, r, "XGROUP", "CREATE", s, "g0", "$")
		both(d, r, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", s, ">")
		both(d, r, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "1", "STREAMS", s, ">")
		both(d, r, "XACK", s, "g1", "1-1")
		for _, args := range [][]string{
			{"XINFO", "GROUPS", s}, {"XINFO", "STREAM", s}, {"XPENDING", s, "g1"},
			{"XINFO", "GROUPS", "nosuch"}, {"XINFO", "STREAM", "nosuch"}, {"XINFO", "CONSUMERS", s, "nosuch"},
			{"XGROUP", "CREATE", s, "g1", "0"}, {"XGROUP", "CREATE", "nosuch", "g", "0"},
			{"XGROUP", "CREATE", s + "new", "g", "$", "MKSTREAM"}, {"XINFO", "GROUPS", s + "new"}, {"XINFO", "STREAM", s + "new"},
			{"XCLAIM", s, "g1", "carol", "0", "2-1", "JUSTID"}, {"XACK", s, "g1", "2-1", "9-9"},
		} {
			dr, rr := both(d, r, args...)
			if args[1] == "STREAM" && rr.K != "-" {
				// The radix tree's figures are Redis's memory layout,
				// which the demo does not have.
				rr = withoutField(withoutField(rr, "radix-tree-keys"), "radix-tree-nodes")
			}
			if text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
		// Idle times differ by the milliseconds the servers took.
		dc, rc := both(d, r, "XINFO", "CONSUMERS", s, "g1")
		if shape(dc) != shape(rc) {
			t.Errorf("RESP%d: XINFO CONSUMERS\n demo %s\n real %s", proto, text(dc), text(rc))
		}
		dp, rp := both(d, r, "XPENDING", s, "g1", "-", "+", "10")
		if shape(dp) != shape(rp) || len(dp.A) != 1 || text(dp.A[0].A[0]) != text(rp.A[0].A[0]) {
			t.Errorf("RESP%d: XPENDING extended\n demo %s\n real %s", proto, text(dp), text(rp))
		}
		// A stream that lost entries: the demo cannot count what was
		// added, and says no more than miniredis knows.
		both(d, r, "XDEL", s, "1-1")
		if dr := d.do("XINFO", "GROUPS", s); dr.K != "*" || len(dr.A) != 2 || !strings.Contains(text(dr), "g1") {
			t.Errorf("RESP%d: XINFO GROUPS after XDEL = %s", proto, text(dr))
		}
	}
}
