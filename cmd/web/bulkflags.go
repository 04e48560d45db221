package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/bulk"
)

// defineBulkFlags declares the bulk jobs' figures: how fast they act on
// a connection's keys (--bulk-rate keys/s, --bulk-batch keys a
// transaction), and up to how much prior state they record to be undone
// (--bulk-undo-keys, --bulk-undo-bytes), how many keys one job may count
// (--bulk-max-keys), how long an unconfirmed preview's records stay
// (--bulk-preview-ttl) and the largest value a job reads (--bulk-max-key-bytes).
func defineBulkFlags(fs *flag.FlagSet, o *bulk.Options) {
	o.UndoBytes, o.MaxKeyBytes = bulk.DefaultUndoBytes, bulk.DefaultMaxKeyBytes
	fs.IntVar(&o.Rate, "bulk-rate", bulk.DefaultRate, "keys per second the bulk jobs of one connection act on together (10–1000000)")
	fs.IntVar(&o.Batch, "bulk-batch", bulk.DefaultBatch, "keys one bulk batch (one WATCH … MULTI/EXEC) acts on (1–10000)")
	fs.Int64Var(&o.UndoKeys, "bulk-undo-keys", bulk.DefaultUndoKeys, "a bulk job of at most this many keys records their prior state and can be undone (1–100000000)")
	fs.Func("bulk-undo-bytes", "… and of at most this much DUMP in all (bytes, or with KB, MB, GB; default 64MB)", func(s string) error {
		n, err := parseBytes(s)
		o.UndoBytes = n
		return err
	})
	fs.Int64Var(&o.MaxKeys, "bulk-max-keys", bulk.DefaultMaxKeys, "a bulk count stops past this many keys (narrow the pattern); each counted key takes about 60–100 bytes of the audit Redis (1000–100000000)")
	fs.DurationVar(&o.PreviewTTL, "bulk-preview-ttl", bulk.DefaultPreviewTTL, "how long the records of a bulk job counted but never confirmed stay in the audit Redis (1m–720h)")
	fs.Func("bulk-max-key-bytes", "a key whose value is larger is never read by a bulk job, which then cannot be undone (bytes, or with KB, MB, GB; default 1MB)", func(s string) error {
		n, err := parseBytes(s)
		o.MaxKeyBytes = n
		return err
	})
}

// checkBulk checks the bulk figures' ranges.
func (cfg *Config) checkBulk() error {
	o := cfg.Bulk
	switch {
	case o.Rate < 10 || o.Rate > 1_000_000:
		return fmt.Errorf("invalid value %d for flag --bulk-rate: want 10 to 1000000 keys per second", o.Rate)
	case o.Batch < 1 || o.Batch > 10_000:
		return fmt.Errorf("invalid value %d for flag --bulk-batch: want 1 to 10000 keys", o.Batch)
	case o.UndoKeys < 1 || o.UndoKeys > 100_000_000:
		return fmt.Errorf("invalid value %d for flag --bulk-undo-keys: want 1 to 100000000 keys", o.UndoKeys)
	case o.UndoBytes < 1:
		return fmt.Errorf("invalid value %d for flag --bulk-undo-bytes: want a positive size", o.UndoBytes)
	case o.MaxKeys < 1000 || o.MaxKeys > 100_000_000:
		return fmt.Errorf("invalid value %d for flag --bulk-max-keys: want 1000 to 100000000 keys", o.MaxKeys)
	case o.PreviewTTL < time.Minute || o.PreviewTTL > 720*time.Hour:
		return fmt.Errorf("invalid value %s for flag --bulk-preview-ttl: want 1m to 720h", o.PreviewTTL)
	case o.MaxKeyBytes < 1<<10 || o.MaxKeyBytes > 1<<30:
		return fmt.Errorf("invalid value %d for flag --bulk-max-key-bytes: want 1KB to 1GB", o.MaxKeyBytes)
	case time.Duration(o.Batch)*time.Second/time.Duration(o.Rate) >= bulk.DefaultLease/2:
		// A batch waits Batch/Rate for its budget; the job's lease is
		// renewed meanwhile, but a wait that long is a stalled job.
		return fmt.Errorf("--bulk-batch %d at --bulk-rate %d keys/s makes each batch wait %s for its turn: want a batch of less than %s of the rate (a job's lease is %s)",
			o.Batch, o.Rate, time.Duration(o.Batch)*time.Second/time.Duration(o.Rate), bulk.DefaultLease/2, bulk.DefaultLease)
	}
	return nil
}

// parseBytes reads "67108864", "64MB", "1GB" (units of 1024).
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 1 || n > (1<<50)/mult {
		return 0, fmt.Errorf("want a size such as 64MB, got %q", s)
	}
	return n * mult, nil
}
