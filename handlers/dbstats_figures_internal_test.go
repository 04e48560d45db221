package handlers

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
)

var figT0 = time.Date(2026, 12, 2, 14, 30, 5, 0, time.UTC)

// sampledDetail is a database of one family read whole (800 keys, exact
// figures), one sampled (5,000,000 keys, 2,000 read whole, every TTL
// read: its rule needs them) and 300,000 unmatched keys, 2,000 of them
// read whole.
func sampledDetail(t *testing.T) stats.DBDetail {
	t.Helper()
	pack := schema.BuiltinPack("eisland")
	small := pack.Family("slider-rate-create-account")
	fam := *pack.Families[0]
	fam.ID, fam.Domain = "weather", "cache"
	const gib = 1 << 30
	return stats.DBDetail{Conn: "main", DB: 3, Pass: 2, CompletedAt: figT0.Add(-12*time.Minute - 30*time.Second),
		TotalKeys: redisview.Some[int64](5_300_800), Budget: stats.SweepBudget{KeysPerSec: 8000, Count: 500},
		SampleSize: 2000, ReadWhole: 4800, TTLOnly: 4_998_000, CPU: 0.008, CountsWhy: "keyspace notifications are off (notify-keyspace-events is empty)",
		Families: []stats.FamilyStats{
			{Family: &fam, Count: 5_000_000, Memory: 13 * gib / 10, MemoryErr: 13 * gib / 10 / 50, Sampled: 2000, TTLRead: 2000,
				TTL: stats.TTLHistogram{0, 0, 0, 0, 5_000_000, 0, 0}, Violations: 7500, ViolationsEstimated: true},
			{Family: small, Count: 800, Memory: 96_000, Sampled: 800, TTLRead: 800, TTL: stats.TTLHistogram{3, 797, 0, 0, 0, 0, 0}, Violations: 3},
		},
		Domains: []stats.DomainStats{
			{Domain: "cache", Count: 5_000_000, Memory: 13 * gib / 10},
			{Domain: small.Domain, Count: 800, Memory: 96_000},
		},
		ViolCount: 7503, UnmCount: 300_000, UnmMemory: 30_000_000, UnmSampled: 2000, UnmMemoryErr: 600_000,
		Memory: 13*gib/10 + 96_000 + 30_000_000, MemoryErr: sumErr(13*gib/10/50, 600_000),
		ByMemory: []stats.BigKey{{Key: "weather:big", Family: "weather", Type: "hash", Memory: 1 << 20}},
	}
}

func renderDB(t *testing.T, vm views.DBPageVM) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := views.DBLive(vm, false).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// Chart strokes may be light; text may not.
	doc.Find(".text-slate-400").Each(func(_ int, s *goquery.Selection) {
		if goquery.NodeName(s) != "g" {
			h, _ := goquery.OuterHtml(s)
			t.Errorf("text in text-slate-400: %s", h)
		}
	})
	return doc
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// Every figure of the database page says whether it is exact or estimated,
// and from how many keys: counts from every name, memory from the family's
// sample with its 95% margin, the TTL histogram from every key's TTL or
// from a sample, violations estimated where type violations are scaled.
func TestDBPageSaysWhatIsExactAndWhatIsSampled(t *testing.T) {
	t.Parallel()
	d := sampledDetail(t)
	vm := dbVM(d, redisview.PackChoice{}, redisview.Status{Up: true, Checked: figT0}, figT0)
	doc := renderDB(t, vm)

	big := doc.Find(`[data-testid="family-weather"]`)
	if got := squash(big.Find(`[data-testid="family-keys"]`).Text()); got != "5,000,000 94% exact" {
		t.Errorf("sampled family's keys %q", got)
	}
	mem := big.Find(`[data-testid="family-memory"]`)
	if got := squash(mem.Text()); got != "1.3 GiB ± 2% 98% from 2,000 of 5,000,000 keys" {
		t.Errorf("sampled family's memory %q", got)
	}
	if got, _ := mem.Attr("title"); !strings.Contains(got, "95% confidence") || !strings.Contains(got, "from 2,000 of 5,000,000 keys read whole") {
		t.Errorf("sampled family's memory title %q", got)
	}
	if got := big.Find(`[data-testid="ttl-note"]`).Text(); got != "from 2,000 keys" {
		t.Errorf("sampled family's TTL note %q", got)
	}
	if got, _ := big.Find(`span[title^="< 1 day"]`).Attr("title"); got != "< 1 day: ≈ 5,000,000" {
		t.Errorf("scaled TTL cell %q", got)
	}
	viol := big.Find(`[data-testid="family-violations"]`)
	if got := squash(viol.Text()); got != "≈ 7,500 estimated from a sample" {
		t.Errorf("sampled family's violations %q", got)
	}
	if got, _ := viol.Attr("title"); !strings.Contains(got, "2,000 keys read whole") {
		t.Errorf("sampled family's violations title %q", got)
	}

	small := doc.Find(`[data-testid="family-slider-rate-create-account"]`)
	if got := squash(small.Find(`[data-testid="family-memory"]`).Text()); got != "93.8 KiB 0% exact" {
		t.Errorf("family read whole: memory %q", got)
	}
	if got := small.Find(`[data-testid="ttl-note"]`).Text(); got != "every key's TTL" {
		t.Errorf("family read whole: TTL note %q", got)
	}
	if got := squash(small.Find(`[data-testid="family-violations"]`).Text()); got != "3" {
		t.Errorf("family read whole: violations %q", got)
	}
	if got := squash(doc.Find(`[data-testid="family-unmatched"] [data-testid="family-memory"]`).Text()); got != "28.6 MiB ± 2% 2% from 2,000 of 300,000 keys" {
		t.Errorf("unmatched memory %q", got)
	}

	if got := doc.Find(`[data-testid="memory-value"]`).Text() + " / " + doc.Find(`[data-testid="memory-whole"]`).Text(); got != "1.3 GiB ± 2% / 95%, from 4,800 of 5,300,800 keys" {
		t.Errorf("total memory %q", got)
	}
	if got := squash(doc.Find(`[data-testid="violation-count"]`).Text()); got != "≈ 7,503" {
		t.Errorf("violation count %q", got)
	}
	if got := doc.Find(`[data-testid="violation-note"]`).Text(); !strings.HasPrefix(got, "estimated from a sample") {
		t.Errorf("violation note %q", got)
	}
	if got := doc.Find(`[data-testid="sweep-cpu"]`).Text(); got != "This database's sweep costs Redis about 0.8% of a core while it runs (estimated from its commands)." {
		t.Errorf("cpu %q", got)
	}
	age := doc.Find(`[data-testid="figures-age"]`)
	if got := squash(age.Text()); got != "Every figure is from the pass completed at 14:17:35 UTC (12m ago)." {
		t.Errorf("age %q", got)
	}
	if age.Find(`time[data-local]`).Length() != 1 {
		t.Error("the pass's time is not a <time> the browser shows in its zone")
	}
	how := doc.Find(`[data-testid="how-read"]`)
	if got := squash(how.Find("summary").Text()); got != "How this was read" {
		t.Errorf("disclosure %q", got)
	}
	for _, want := range []string{"Counted from their names", "the first 2,000 keys of each family", "read 4,800 of its 5,300,800 keys whole",
		"4,998,000 only their TTL", "keyspace notifications are off"} {
		if !strings.Contains(how.Text(), want) {
			t.Errorf("disclosure lacks %q: %s", want, squash(how.Text()))
		}
	}
	if got := doc.Find(`[data-testid="big-note"]`).Text(); !strings.Contains(got, "of the 4,800 keys read whole") {
		t.Errorf("biggest keys note %q", got)
	}
	if got, _ := doc.Find(`[data-testid="domain"]`).First().Find("td").Last().Attr("title"); !strings.Contains(got, "95% confidence") {
		t.Errorf("estimated domain's memory title %q", got)
	}
}

// A database read whole says every figure is exact, and nothing is
// called estimated.
func TestDBPageReadWholeIsExact(t *testing.T) {
	t.Parallel()
	d := sampledDetail(t)
	d.Families = d.Families[1:]
	d.Domains = d.Domains[1:]
	d.UnmCount, d.UnmMemory, d.UnmSampled, d.UnmMemoryErr = 0, 0, 0, 0
	d.Memory, d.MemoryErr, d.ViolCount, d.CPU = 96_000, 0, 3, 0
	d.CountsLive, d.CountsSince, d.CountsWhy = true, figT0.Add(-time.Hour), ""
	vm := dbVM(d, redisview.PackChoice{}, redisview.Status{Up: true, Checked: figT0}, figT0)
	doc := renderDB(t, vm)
	if got := doc.Find(`[data-testid="memory-value"]`).Text() + " / " + doc.Find(`[data-testid="memory-whole"]`).Text(); got != "93.8 KiB / exact" {
		t.Errorf("total memory %q", got)
	}
	if got := squash(doc.Find(`[data-testid="violation-count"]`).Text()); got != "3" || doc.Find(`[data-testid="violation-note"]`).Length() != 0 {
		t.Errorf("violation count %q said estimated", got)
	}
	if doc.Find(`[data-testid="sweep-cpu"]`).Length() != 0 {
		t.Error("a cost nobody estimated is stated")
	}
	if got := squash(doc.Find(`[data-testid="figures-age"]`).Text()); got != "Counts kept current from keyspace events since 13:30:05 UTC; memory, TTLs and violations from the pass completed at 14:17:35 UTC (12m ago)." {
		t.Errorf("age %q", got)
	}
	tables := doc.Find("table").Text() + doc.Find(`[data-testid="violations"]`).Text()
	if strings.Contains(tables, "≈") || strings.Contains(tables, "±") || strings.Contains(tables, "estimated") {
		t.Errorf("an exact page says estimated: %s", squash(tables))
	}
}

// While the first pass runs, counts are scaled from its coverage and say
// so; before anything was read whole, memory is not known rather than 0.
func TestDBPageFirstPassEstimates(t *testing.T) {
	t.Parallel()
	d := sampledDetail(t)
	d.Estimated, d.Coverage, d.Seen, d.Pass, d.CompletedAt = true, 0.25, 1_325_200, 0, time.Time{}
	d.Families[1].Sampled, d.Families[1].TTLRead = 0, 0
	vm := dbVM(d, redisview.PackChoice{}, redisview.Status{Up: true, Checked: figT0}, figT0)
	doc := renderDB(t, vm)
	if got := squash(doc.Find(`[data-testid="family-weather"] [data-testid="family-keys"]`).Text()); got != "≈ 5,000,000 94% estimated" {
		t.Errorf("keys while estimating %q", got)
	}
	small := doc.Find(`[data-testid="family-slider-rate-create-account"]`)
	if got := squash(small.Find(`[data-testid="family-memory"]`).Text()); got != "— 0% none read yet" {
		t.Errorf("memory of a family none of whose keys was read %q", got)
	}
	if got := small.Find(`[data-testid="ttl-note"]`).Text(); got != "no TTL read yet" {
		t.Errorf("TTL note %q", got)
	}
	if doc.Find(`[data-testid="figures-age"]`).Length() != 0 {
		t.Error("an age is given before a pass completed")
	}
	if got, _ := small.Find(`span[title^="< 1 min"]`).Attr("title"); got != "< 1 min: ≈ 797" {
		t.Errorf("TTL cell scaled from the first pass's coverage %q", got)
	}
}

// The violations list says which databases' counts are scaled from a
// sample, and so does its total.
func TestViolationsListSaysSampledCounts(t *testing.T) {
	t.Parallel()
	sampled := sampledDetail(t)
	exact := sampledDetail(t)
	exact.DB, exact.Families, exact.ViolCount = 5, exact.Families[1:], 3
	pc := redisview.PackChoice{Pack: schema.BuiltinPack("eisland"), Why: "detected"}
	vm := violationsVM("main", []stats.DBDetail{sampled, exact}, pc, redisview.Status{Up: true, Checked: figT0}, "")
	if vm.Total != "≈ 7,506" {
		t.Errorf("total %q", vm.Total)
	}
	if got := vm.DBs[0].Count; got != "≈ 7,503" || !strings.Contains(vm.DBs[0].Status, "estimated from a sample") {
		t.Errorf("sampled database: %q, %q", got, vm.DBs[0].Status)
	}
	if got := vm.DBs[1].Count; got != "3" || strings.Contains(vm.DBs[1].Status, "estimated") {
		t.Errorf("exact database: %q, %q", got, vm.DBs[1].Status)
	}
	// Another database still in its first pass: at least this many.
	vm = violationsVM("main", []stats.DBDetail{sampled, {DB: 7}}, pc, redisview.Status{Up: true, Checked: figT0}, "")
	if vm.Total != "≈ 7,503 or more" {
		t.Errorf("incomplete total %q", vm.Total)
	}
}

// knownSweeps is the Sweepers of a test that reads only what the sweeps
// last found.
type knownSweeps map[int]stats.DBDetail

func (knownSweeps) Acquire(*redisview.Conn, int) (*stats.Sweeper, func()) {
	panic("the overview's violation counts read no server")
}

func (k knownSweeps) Known(_ string, db int) (stats.DBDetail, bool) {
	d, ok := k[db]
	return d, ok
}

// The overview's violation counts say which are estimated from a sample.
func TestOverviewViolationsSaySampled(t *testing.T) {
	t.Parallel()
	sampled := sampledDetail(t)
	exact := sampledDetail(t)
	exact.DB, exact.Families, exact.ViolCount = 5, exact.Families[1:], 3
	a := &App{sweepers: knownSweeps{3: sampled, 5: exact}}
	vm := views.OverviewVM{DBs: []views.DBRow{{Index: 3}, {Index: 5}}}
	a.overviewViolations(&vm, "main")
	if r := vm.DBs[0]; r.Violations != "≈ 7,503" || !strings.HasSuffix(r.ViolationsWhy, "estimated from a sample") {
		t.Errorf("sampled database: %q (%q)", r.Violations, r.ViolationsWhy)
	}
	if r := vm.DBs[1]; r.Violations != "3" || strings.Contains(r.ViolationsWhy, "estimated") {
		t.Errorf("exact database: %q (%q)", r.Violations, r.ViolationsWhy)
	}
}

// A family read whole whose big key's memory is Redis's extrapolation is
// not called exact (make bench-sweep found a 200,000-member set 7% off).
func TestFamilyMemoryWithExtrapolatedKeyNotExact(t *testing.T) {
	f := stats.FamilyStats{Family: &schema.Family{ID: "ban-set"}, Count: 1, Sampled: 1, TTLRead: 1, Memory: 13 << 20, MemoryEstimatedKeys: 1}
	var r views.FamilyRow
	familyFigures(&r, f, stats.DBDetail{})
	if !strings.HasPrefix(r.Memory, "≈ ") || r.MemoryNote != "Redis's estimate" || !strings.Contains(r.MemoryTitle, "1 big key is extrapolated") {
		t.Fatalf("%q %q %q", r.Memory, r.MemoryNote, r.MemoryTitle)
	}
	f.MemoryEstimatedKeys = 0
	r = views.FamilyRow{}
	familyFigures(&r, f, stats.DBDetail{})
	if r.MemoryNote != "exact" {
		t.Fatalf("read whole, measured: %q", r.MemoryNote)
	}
}
