package redisview

import (
	"context"
	"fmt"

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
	scans := make([]*redis.ScanCmd, defaultDatabases)
	for db := range scans {
		p.Select(ctx, db)
		scans[db] = p.Scan(ctx, 0, "", samplePerDB)
	}
	_, err := p.Exec(ctx)
	if isConnErr(err) {
		return err
	}
	var sample []schema.Key
	for db, cmd := range scans {
		keys, _, err := cmd.Result()
		if err != nil {
			continue // out of range on servers with fewer databases
		}
		for _, k := range keys {
			sample = append(sample, schema.Key{DB: db, Name: k})
		}
	}
	best, score := schema.BestPack(packs, sample)
	choice := PackChoice{Pack: best, Score: score, Detected: true}
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
	c.log.Info("schema pack chosen", "pack", packName(best), "why", choice.Why)
	return nil
}

func packName(p *schema.Pack) string {
	if p == nil {
		return "(none)"
	}
	return p.Name
}
