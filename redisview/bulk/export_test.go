package bulk

import (
	"context"
	"errors"
)

// SetAfterRead sets the hook a transition calls between its first read of
// a job and its compare-and-set; restore puts the old one back.
func SetAfterRead(f func(op string)) (restore func()) {
	old := afterRead
	afterRead = f
	return func() { afterRead = old }
}

// PlantInFlight records keys of job id as a batch does just before its
// EXEC (their prior state and the state the write would leave), as a
// Keydeck that stopped there, or lost the EXEC's reply, leaves them.
func (e *Engine) PlantInFlight(ctx context.Context, id string, keys ...string) error {
	j, err := e.Job(ctx, id)
	if err != nil {
		return err
	}
	k, err := kindOf(j.Spec.Kind)
	if err != nil {
		return err
	}
	conn, err := e.o.Conns(j.Spec.Sel.Conn)
	if err != nil {
		return err
	}
	c := conn.DB(j.Spec.Sel.DB)
	all, err := e.loadItems(ctx, id, 0, j.Count)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var items []Item
	var act []int
	for _, it := range all {
		if want[it.Key] {
			act = append(act, len(items))
			items = append(items, it)
		}
	}
	states, err := e.readStates(ctx, c, keys)
	if err != nil {
		return err
	}
	now, err := c.Time(ctx).Result()
	if err != nil {
		return err
	}
	if ok, err := e.acquire(ctx, id); err != nil || !ok {
		return errors.Join(err, errLeaseLost)
	}
	defer e.release(ctx, id)
	return e.markInFlight(ctx, j, k, items, states, act, now)
}
