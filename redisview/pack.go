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
func (c *Conn) Sensitive(db int, key string) bool {
	if cls := c.Classifier(); cls != nil {
		if f, ok := cls.Classify(db, key); ok {
			return f.Sensitive
		}
	}
	return false
}

// ForcePack sets the pack named by configuration; sampling will not override it.
func (c *Conn) ForcePack(p *schema.Pack) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pack = PackChoice{Pack: p, Forced: true, Detected: true, Why: "set with --pack-for"}
}

// samplePerDB is how many keys one SCAN page per database contributes.
const samplePerDB = 100

// DetectPack samples keys from every database (one SCAN page each, all in
// one pipelined round trip) and picks the pack that classifies most of them.
// A forced pack is kept.
func (c *Conn) DetectPack(ctx context.Context, packs []*schema.Pack) error {
	if c.PackChoice().Forced {
		return nil
	}
	p := c.multi.Pipeline()
	scans := make([]*redis.ScanCmd, DefaultDatabases)
	selects := make([]*redis.StatusCmd, DefaultDatabases)
	for db := range scans {
		selects[db] = p.Select(ctx, db)
		scans[db] = p.Scan(ctx, 0, "", samplePerDB)
	}
	_, err := p.Exec(ctx)
	if IsConnErr(err) {
		return err
	}
	var sample []schema.Key
	for db, cmd := range scans {
		if selects[db].Err() != nil {
			break // fewer databases: the SCAN ran on the previous one
		}
		keys, _, err := cmd.Result()
		if err != nil {
			continue
		}
		for _, k := range keys {
			sample = append(sample, schema.Key{DB: db, Name: k})
		}
	}
	best, score := schema.BestPack(packs, sample)
	// An empty or unrecognised server is sampled again later: it may fill.
	choice := PackChoice{Pack: best, Score: score, Detected: best != nil}
	switch {
	case len(sample) == 0:
		choice.Why = "the server holds no keys to match a pack against"
	case best == nil && score.Pack != nil:
		choice.Why = fmt.Sprintf("no pack fits: the closest, %s, explains %.0f%% of %d sampled keys", score.Pack.Name, score.Share()*100, score.Total)
	case best == nil:
		choice.Why = "no pack fits"
	default:
		choice.Why = fmt.Sprintf("matched %.0f%% of %d sampled keys", score.Share()*100, score.Total)
	}
	c.mu.Lock()
	if !c.pack.Forced {
		c.pack = choice
	}
	c.mu.Unlock()
	c.mu.Lock()
	c.packTried = time.Now()
	c.mu.Unlock()
	c.log.Info("schema pack chosen", "pack", packName(best), "why", choice.Why)
	return nil
}

// packRetry is how often a connection without a pack is sampled again.
const packRetry = time.Minute

// EnsurePack samples the connection again when no pack has been found yet
// and the last try is older than packRetry; it returns at once otherwise
// (call it from pollers freely). The sampling runs in the background under
// the monitor's context, and Monitor awaits it; without a running monitor
// nothing is sampled.
func (c *Conn) EnsurePack(packs []*schema.Pack) {
	c.mu.Lock()
	due := !c.pack.Detected && time.Since(c.packTried) > packRetry
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
// connection is matched by sampling each time its monitor sees it come up
// until a sampling succeeds.
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
		c.OnChange(func(st Status) {
			if st.Up {
				c.EnsurePack(packs)
			}
		})
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
