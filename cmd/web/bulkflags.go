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
// (--bulk-undo-keys, --bulk-undo-bytes).
func defineBulkFlags(fs *flag.FlagSet, o *bulk.Options) {
	o.UndoBytes = bulk.DefaultUndoBytes
	fs.IntVar(&o.Rate, "bulk-rate", bulk.DefaultRate, "keys per second the bulk jobs of one connection act on together (10–1000000)")
	fs.IntVar(&o.Batch, "bulk-batch", bulk.DefaultBatch, "keys one bulk batch (one WATCH … MULTI/EXEC) acts on (1–10000)")
	fs.Int64Var(&o.UndoKeys, "bulk-undo-keys", bulk.DefaultUndoKeys, "a bulk job of at most this many keys records their prior state and can be undone (1–100000000)")
	fs.Func("bulk-undo-bytes", "… and of at most this much DUMP in all (bytes, or with KB, MB, GB; default 64MB)", func(s string) error {
		n, err := parseBytes(s)
		o.UndoBytes = n
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
