package main

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/bulk"
)

func TestBulkFlags(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	cfg, err := parseFlags("keydeck", nil, none)
	if err != nil || cfg.Bulk.Rate != bulk.DefaultRate || cfg.Bulk.Batch != bulk.DefaultBatch ||
		cfg.Bulk.UndoKeys != bulk.DefaultUndoKeys || cfg.Bulk.UndoBytes != 64<<20 || cfg.Bulk.MaxKeys != 2_000_000 ||
		cfg.Bulk.PreviewTTL != time.Hour || cfg.Bulk.MaxKeyBytes != 1<<20 {
		t.Fatalf("defaults: %+v, %v", cfg.Bulk, err)
	}
	cfg, err = parseFlags("keydeck", []string{"--bulk-rate", "50000", "--bulk-batch", "500", "--bulk-undo-keys", "1000000", "--bulk-undo-bytes", "1GB",
		"--bulk-max-keys", "5000", "--bulk-preview-ttl", "24h", "--bulk-max-key-bytes", "4MB"}, none)
	if err != nil || cfg.Bulk.Rate != 50000 || cfg.Bulk.Batch != 500 || cfg.Bulk.UndoKeys != 1_000_000 || cfg.Bulk.UndoBytes != 1<<30 ||
		cfg.Bulk.MaxKeys != 5000 || cfg.Bulk.PreviewTTL != 24*time.Hour || cfg.Bulk.MaxKeyBytes != 4<<20 {
		t.Fatalf("given: %+v, %v", cfg.Bulk, err)
	}
	for _, args := range [][]string{
		{"--bulk-rate", "5"}, {"--bulk-rate", "2000000"}, {"--bulk-batch", "0"}, {"--bulk-undo-keys", "0"},
		{"--bulk-undo-bytes", "12XB"}, {"--bulk-undo-bytes", "-1"}, {"--bulk-undo-bytes", "0MB"},
		{"--bulk-max-keys", "10"}, {"--bulk-preview-ttl", "1s"}, {"--bulk-max-key-bytes", "2GB"},
		{"--bulk-rate", "10", "--bulk-batch", "10000"}, {"--bulk-rate", "100", "--bulk-batch", "750"},
	} {
		if _, err := parseFlags("keydeck", args, none); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
