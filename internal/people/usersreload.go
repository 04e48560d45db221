package people

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// Reload reads the users file again. A valid new version is in force for
// the next request (and, through the websockets' periodic identity check,
// for open live views); an invalid or unreadable one is logged with why, and
// the last good version stays in force. Content already read is not parsed
// or logged again unless force (SIGHUP), which always logs the outcome.
func (u *Users) Reload(force bool, log *slog.Logger) error {
	if u == nil || u.path == "" {
		return errors.New("no users file to reload")
	}
	data, err := os.ReadFile(u.path)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		// An editor replacing the file may leave it missing for a moment:
		// say so once, keep serving the accounts we have.
		if force || err.Error() != u.readErr {
			log.Warn("users file unreadable; keeping the last good version", "path", u.path, "err", err)
		}
		u.readErr = err.Error()
		return err
	}
	u.readErr = ""
	sum := sha256.Sum256(data)
	if sum == u.seen && !force {
		return nil
	}
	u.seen = sum
	set, err := parseUsers(u.path, data)
	if err != nil {
		log.Error("users file invalid; keeping the last good version", "err", err)
		return err
	}
	old := u.set.Swap(set)
	added, removed, changed := diffUsers(old, set)
	log.Info("users file reloaded", "path", u.path, "users", len(set.byName),
		"added", added, "removed", removed, "changed", changed)
	if len(removed) > 0 {
		// Told only if still gone after the grace: a file cut off for a
		// reload, or another replica's file landing later, ends nothing.
		if u.gone == nil {
			u.gone = map[string]uint64{}
		}
		u.goneGen++
		gen := u.goneGen
		for _, n := range removed {
			u.gone[n] = gen
		}
		clock.Or(u.clock).AfterFunc(GoneGrace, func() { u.tellGone(removed, gen) })
	}
	return nil
}

// tellGone tells OnRemoved which of names, removed by reload gen, are
// still out of the users file (and were not removed again since). The
// callbacks run without u.mu held.
func (u *Users) tellGone(names []string, gen uint64) {
	u.mu.Lock()
	var gone []string
	for _, n := range names {
		if u.gone[n] != gen {
			continue // removed again since: that removal's grace counts
		}
		delete(u.gone, n)
		if _, back := u.Lookup(n); !back {
			gone = append(gone, n)
		}
	}
	fs := slices.Clone(u.onRemoved)
	u.mu.Unlock()
	if len(gone) == 0 {
		return
	}
	for _, f := range fs {
		f(gone)
	}
}

// diffUsers names what a reload changed, for the log (never a hash).
func diffUsers(old, cur *userSet) (added, removed, changed []string) {
	for name, x := range cur.byName {
		was, ok := old.byName[name]
		switch {
		case !ok:
			added = append(added, name)
		case was.Level != x.Level:
			changed = append(changed, name+": "+was.Level.String()+"→"+x.Level.String())
		case !bytes.Equal(was.hash, x.hash):
			changed = append(changed, name+": new password")
		case was.Email != x.Email:
			changed = append(changed, name+": new e-mail")
		}
	}
	for name := range old.byName {
		if _, ok := cur.byName[name]; !ok {
			removed = append(removed, name)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	return added, removed, changed
}

// Watch reloads the users file when its content changes, read every
// `every` of the users' clock (the file is small, and a content hash
// catches edits that keep its size and modification time), and at once,
// logging the outcome, whenever kick fires (SIGHUP). It returns when ctx
// ends.
func (u *Users) Watch(ctx context.Context, every time.Duration, kick <-chan struct{}, log *slog.Logger) {
	if u == nil || u.path == "" {
		return
	}
	t := clock.Or(u.clock).NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			_ = u.Reload(false, log)
		case <-kick:
			_ = u.Reload(true, log)
		}
	}
}

// GoneGrace is how long an account must stay out of the users file
// before OnRemoved is told it is gone.
const GoneGrace = time.Minute
