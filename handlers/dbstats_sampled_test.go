package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview/stats"
)

// On a real server swept with a sample of 10 keys per family, the
// database page says which figures are exact and which are estimated:
// a family of 40 keys has exact counts and TTLs (its TTL rule has every
// TTL read) and memory from 10 of its keys; a family of 3 is read whole,
// every figure exact. The JSON twin says the same in numbers.
func TestDBPageOnARealSweepSaysWhatWasSampled(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	c := rs.Client(4)
	for i := range 40 {
		if err := c.Set(ctx, fmt.Sprintf("verify:slider:challenge:ch-%02d", i), strings.Repeat("x", 10+i*20), 10*time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, acct := range []string{"YWJj", "ZGVm", "Z2hp"} {
		if err := c.HSet(ctx, "verify:slider:rate:create:account:"+acct, "tokens", 5, "ts", 1).Err(); err != nil {
			t.Fatal(err)
		}
		c.Expire(ctx, "verify:slider:rate:create:account:"+acct, time.Minute)
	}
	f := startConsole(t, rs, server.Config{Sweep: stats.SweepBudget{KeysPerSec: 100000, Count: 500, Sample: 10}}, nil).up(t)

	var doc *goquery.Document
	waitFor(t, "a completed pass on the page", func() bool {
		code, _, body := get(t, f.srv.URL+"/c/main/db/4")
		if code != http.StatusOK {
			return false
		}
		doc, _ = goquery.NewDocumentFromReader(strings.NewReader(body))
		return doc.Find(`[data-testid="figures-age"]`).Length() == 1 && doc.Find(`[data-testid="family-slider-challenge"]`).Length() == 1
	})
	big := doc.Find(`[data-testid="family-slider-challenge"]`)
	if got := strings.Join(strings.Fields(big.Find(`[data-testid="family-keys"]`).Text()), " "); !strings.HasPrefix(got, "40 ") || !strings.HasSuffix(got, " exact") {
		t.Errorf("sampled family's keys %q", got)
	}
	if got := big.Find(`[data-testid="family-memory-note"]`).Text(); got != "from 10 of 40 keys" {
		t.Errorf("sampled family's memory note %q", got)
	}
	if got := big.Find(`[data-testid="family-memory"] span`).First().Text(); !strings.Contains(got, "±") {
		t.Errorf("sampled family's memory %q has no margin", got)
	}
	if got := big.Find(`[data-testid="ttl-note"]`).Text(); got != "every key's TTL" {
		t.Errorf("TTL note of a family with a TTL rule %q", got)
	}
	small := doc.Find(`[data-testid="family-slider-rate-create-account"]`)
	if got := small.Find(`[data-testid="family-memory-note"]`).Text(); got != "exact" {
		t.Errorf("family read whole: memory note %q", got)
	}
	if got := doc.Find(`[data-testid="memory-whole"]`).Text(); got != "95%, from 13 of 43 keys" {
		t.Errorf("total memory %q", got)
	}
	if got := doc.Find(`[data-testid="big-note"]`).Text(); !strings.Contains(got, "of the 13 keys read whole") {
		t.Errorf("biggest keys note %q", got)
	}
	how := doc.Find(`[data-testid="how-read"]`).Text()
	if !strings.Contains(how, "the first 10 keys of each family") {
		t.Errorf("how this was read: %s", how)
	}

	_, _, js := get(t, f.srv.URL+"/api/v1/connections/main/db/4/stats", "Accept", "application/json")
	for _, want := range []string{`"sample_size":10`, `"sampled_keys":13`, `"of_keys":13`, `"read_path":"pipelines"`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON lacks %s: %s", want, js)
		}
	}
}
