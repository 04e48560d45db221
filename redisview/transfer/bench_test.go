package transfer_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/transfer"
)

// countingWriter counts what an export writes.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkExport measures export throughput on a real redis-server:
// 20,000 keys (strings of 100 B, hashes of 10 fields, sorted sets of 20
// members, lists of 10 elements), exported whole by pattern, no budget.
// It reports keys/s and MB/s of JSON Lines written.
//
//	go test -run '^$' -bench BenchmarkExport -benchtime 5x ./redisview/transfer/
func BenchmarkExport(b *testing.B) {
	rs := redistest.Start(b)
	c := rs.Client(0)
	ctx := context.Background()
	const n = 20_000
	p := c.Pipeline()
	for i := range n {
		k := fmt.Sprintf("bench:%d", i)
		switch i % 4 {
		case 0:
			p.Set(ctx, k, strings.Repeat("v", 100), time.Hour)
		case 1:
			for f := range 10 {
				p.HSet(ctx, k, fmt.Sprintf("field%d", f), fmt.Sprintf("value-%d-%d", i, f))
			}
		case 2:
			for m := range 20 {
				p.ZAdd(ctx, k, redisZ(float64(m)*1.5, fmt.Sprintf("member-%d", m)))
			}
		case 3:
			for e := range 10 {
				p.RPush(ctx, k, fmt.Sprintf("element-%d", e))
			}
		}
		if i%1000 == 999 {
			if _, err := p.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var keys, bytes int64
	for b.Loop() {
		w := &countingWriter{}
		e := transfer.Export{Reader: &transfer.Reader{C: c}, Select: transfer.Selection{Pattern: "bench:*"}}
		st, err := e.Run(ctx, io.Writer(w))
		if err != nil {
			b.Fatal(err)
		}
		if st.Keys != n {
			b.Fatalf("%d keys exported, want %d", st.Keys, n)
		}
		keys, bytes = keys+st.Keys, bytes+w.n
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(keys)/secs, "keys/s")
	b.ReportMetric(float64(bytes)/secs/1e6, "MB/s")
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
