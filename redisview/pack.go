package redisview

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// PackChoice records which schema pack explains a connection's keys.
type PackChoice struct {
	Pack     *schema.Pack // nil: none fits
	Score    schema.MatchScore
	Forced   bool   // named with --pack-for
	Why      string // how the choice was made, for the page
	Detected bool   // sampling has run (or the pack was forced)
	// Sampled: a sampling has run, whatever it found (or the pack was
	// forced): whether a key's family is known is decided.
	Sampled bool
	// At is when the choice was made; a sampling that found none has set
	// the next one's time by then.
	At time.Time
}

// Pack is the connection's schema pack, nil until chosen or when none fits.
func (c *Conn) Pack() *schema.Pack {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pack.Pack
}

// PackChoice tells how the pack was chosen.
func (c *Conn) PackChoice() PackChoice {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pack
}

// Classifier is the pack's classifier, or nil without a pack.
func (c *Conn) Classifier() *schema.Classifier {
	if p := c.Pack(); p != nil {
		return p.Classifier()
	}
	return nil
}

// Sensitive reports a key whose family's values must never be shown or
// sent. A view that reads any key it is named (a leaderboard page reads any
// sorted set) must ask.
//
// On a connection offered packs (Registry.UsePacks) or monitored, and not
// sampled yet, no key's family is known: every key is treated as
// sensitive until the first sampling decides (a server that turns out to
// hold no pack then shows its values), whether or not a monitor runs yet
// (or still).
func (c *Conn) Sensitive(db int, key string) bool {
	c.mu.Lock()
	ch, pending := c.pack, len(c.packs) > 0 || c.detectCtx != nil
	c.mu.Unlock()
	if ch.Pack == nil {
		return pending && !ch.Sampled
	}
	if f, ok := ch.Pack.Classifier().Classify(db, key); ok {
		return f.Sensitive
	}
	return false
}

// ForcePack sets the pack named by configuration; sampling will not override it.
func (c *Conn) ForcePack(p *schema.Pack) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pack = PackChoice{Pack: p, Forced: true, Detected: true, Sampled: true, Why: "set with --pack-for", At: c.clock.Now()}
}

// samplePerDB is how many keys one SCAN page per database contributes.
const samplePerDB = 100

// DetectPack samples keys from every database (one SCAN page each, all in
// one pipelined round trip) and picks the pack that classifies most of them.
// A forced pack is kept. When none fits (the server may be empty, or still
// filling), the next sampling is due after a back-off (EnsurePack).
func (c *Conn) DetectPack(ctx context.Context, packs []*schema.Pack) error {
	if c.PackChoice().Forced {
		return nil
	}
	sample, scanErr, err := c.sample(ctx)
	if IsConnErr(err) {
		c.mu.Lock()
		c.backOffPack()
		c.mu.Unlock()
		return err
	}
	best, score := schema.BestPack(packs, sample)
	// An empty or unrecognised server is sampled again later: it may fill.
	choice := PackChoice{Pack: best, Score: score, Detected: best != nil, Sampled: true}
	switch {
	case len(sample) == 0 && scanErr != nil:
		choice.Why = Refusal("SCAN", scanErr)
	case len(sample) == 0:
		choice.Why = "the server holds no keys to match a pack against"
	case best == nil && score.Pack != nil:
		choice.Why = fmt.Sprintf("no pack fits: the closest, %s, explains %.0f%% of %d sampled keys", score.Pack.Name, score.Share()*100, score.Total)
	case best == nil:
		choice.Why = "no pack fits"
	default:
		choice.Why = fmt.Sprintf("matched %.0f%% of %d sampled keys", score.Share()*100, score.Total)
	}
	if best == nil {
		choice.Why += fmt.Sprintf(" (sampled again within %s)", packRetryMax)
	}
	c.mu.Lock()
	prev := c.pack
	if best == nil {
		c.backOffPack()
	}
	if !c.pack.Forced {
		choice.At = c.clock.Now()
		c.pack = choice
	}
	c.mu.Unlock()
	log := c.log.Info
	if prev.Pack == best && prev.Why == choice.Why {
		log = c.log.Debug // the same answer again: no news
	}
	log("schema pack chosen", "pack", packName(best), "why", choice.Why)
	return nil
}

// A connection without a pack is sampled again after a wait that starts
// at packRetryMin and doubles up to packRetryMax: a server that has just
// come up is often being filled, and an empty or foreign one costs one
// pipelined round trip every packRetryMax. The wait starts again from
// zero whenever the server comes up.
const (
	packRetryMin = time.Second
	packRetryMax = 10 * time.Second
)

// backOffPack schedules the next sampling after one that found no pack;
// c.mu is held.
func (c *Conn) backOffPack() {
	c.packWait = min(max(2*c.packWait, packRetryMin), packRetryMax)
	c.packNext = c.clock.Now().Add(c.packWait)
}

// retryPack offers the connection's packs (Registry.UsePacks) to
// EnsurePack; the monitor calls it after every probe that reached the
// server.
func (c *Conn) retryPack() {
	c.mu.Lock()
	packs := c.packs
	c.mu.Unlock()
	if len(packs) > 0 {
		c.EnsurePack(packs)
	}
}

// EnsurePack samples the connection again when no pack has been found yet
// and the back-off since the last sampling has run out (at once after the
// server came up); it returns at once otherwise (call it from pollers
// freely). The sampling runs in the background under the monitor's
// context, and Monitor awaits it; without a running monitor nothing is
// sampled. The monitor calls it after every good probe.
func (c *Conn) EnsurePack(packs []*schema.Pack) {
	c.mu.Lock()
	due := !c.pack.Detected && !c.clock.Now().Before(c.packNext)
	parent := c.detectCtx
	if !due || parent == nil || c.detectEnd || !c.detecting.TryLock() {
		c.mu.Unlock()
		return
	}
	c.detectWG.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.detectWG.Done()
		defer c.detecting.Unlock()
		ctx, cancel := context.WithTimeout(parent, 10*time.Second)
		defer cancel()
		if err := c.DetectPack(ctx, packs); err != nil {
			c.log.Warn("schema pack detection failed", "err", c.SafeErr(err))
		}
	}()
}

func packName(p *schema.Pack) string {
	if p == nil {
		return "(none)"
	}
	return p.Name
}

// UsePacks makes packs available to every connection: forced names (from
// --pack-for, connection → pack name) are applied now; every other
// connection is matched by sampling, driven by its monitor: at once when
// the server comes up, then again after a back-off while no pack fits.
func (r *Registry) UsePacks(packs []*schema.Pack, forced map[string]string) error {
	byName := map[string]*schema.Pack{}
	for _, p := range packs {
		byName[p.Name] = p
	}
	for conn, name := range forced {
		c, err := r.Get(conn)
		if err != nil {
			return fmt.Errorf("--pack-for %s=%s: %w", conn, name, err)
		}
		p, ok := byName[name]
		if !ok {
			return fmt.Errorf("--pack-for %s=%s: no pack named %q (have: %s)", conn, name, name, packNames(packs))
		}
		c.ForcePack(p)
	}
	r.packs = packs
	for _, c := range r.conns {
		c.mu.Lock()
		c.packs = packs
		c.mu.Unlock()
	}
	return nil
}

// Packs are the schema packs in use.
func (r *Registry) Packs() []*schema.Pack { return r.packs }

func packNames(packs []*schema.Pack) string {
	var names []string
	for _, p := range packs {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// sample is one SCAN page of every database (one pipelined round trip),
// or on a cluster one page of database 0 on every primary. err is the
// round trip's; scanErr a SCAN's that was refused.
func (c *Conn) sample(ctx context.Context) (sample []schema.Key, scanErr, err error) {
	if cl := c.Client(); c.IsCluster() {
		keys, _, err := ScanStep(ctx, cl, CursorStart, "", samplePerDB, "")
		if IsConnErr(err) {
			return nil, nil, err
		}
		for _, k := range keys {
			sample = append(sample, schema.Key{DB: 0, Name: k})
		}
		return sample, err, nil
	}
	p := c.CrossDBPipeline()
	scans := make([]*redis.ScanCmd, DefaultDatabases)
	selects := make([]*redis.StatusCmd, DefaultDatabases)
	for db := range scans {
		selects[db] = p.Select(ctx, db)
		scans[db] = p.Scan(ctx, 0, "", samplePerDB)
	}
	if _, err := p.Exec(ctx); IsConnErr(err) {
		return nil, nil, err
	}
	for db, cmd := range scans {
		if selects[db].Err() != nil {
			break // fewer databases: the SCAN ran on the previous one
		}
		keys, _, err := cmd.Result()
		if err != nil {
			scanErr = err
			continue
		}
		for _, k := range keys {
			sample = append(sample, schema.Key{DB: db, Name: k})
		}
	}
	return sample, scanErr, nil
}
