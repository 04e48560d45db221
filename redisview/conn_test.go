package redisview

import (
	"errors"
	"testing"
	"time"
)

// A failed probe marks the connection down, once, and tells its hooks.
func TestConnRecordsProbes(t *testing.T) {
	c := openConn(t, "redis://127.0.0.1:1/0")
	var changes []bool
	c.OnChange(func(st Status) { changes = append(changes, st.Up) })
	now := time.Now()
	c.record(nil, now)
	if st := c.Status(); !st.Up || !st.Since.Equal(now) {
		t.Fatalf("after a good probe: %+v", st)
	}
	c.record(errors.New("connection refused"), now.Add(time.Second))
	c.record(errors.New("connection refused"), now.Add(2*time.Second))
	if st := c.Status(); st.Up || st.Err != "connection refused" || !st.Since.Equal(now.Add(time.Second)) {
		t.Fatalf("after failed probes: %+v", st)
	}
	if len(changes) != 2 || !changes[0] || changes[1] {
		t.Fatalf("hooks saw %v, want [true false]", changes)
	}
}
