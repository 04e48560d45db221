package schema

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// CounterParams: role counter.
type CounterParams struct {
	Limit    int64  `yaml:"limit"`     // 0: no limit
	OnExceed string `yaml:"on_exceed"` // reject (default), captcha or lock
	Counts   string `yaml:"counts"`    // "" or requests (default), or failures: support may clear it
}

// Check validates the params and fills defaults.
func (p *CounterParams) Check(*Family) error {
	if p.Limit < 0 {
		return fmt.Errorf("limit %d is negative", p.Limit)
	}
	if err := oneOf("counts", p.Counts, "", "requests", "failures"); err != nil {
		return err
	}
	return oneOf("on_exceed", p.OnExceed, "", "reject", "captcha", "lock")
}

// CounterWindowParams: role counter-window, an INCR whose first hit sets
// the TTL, so the window is fixed, not sliding.
type CounterWindowParams struct {
	Limit    int64         `yaml:"limit"`
	Window   time.Duration `yaml:"window"`
	Calendar string        `yaml:"calendar"`  // "", day or month: the window ends at a calendar boundary
	TimeZone string        `yaml:"timezone"`  // of the calendar: UTC or ±HH:MM
	OnExceed string        `yaml:"on_exceed"` // reject (default), captcha or lock
	Counts   string        `yaml:"counts"`    // "" or requests (default), or failures: support may clear it
}

// Check validates the params and fills defaults.
func (p *CounterWindowParams) Check(*Family) error {
	if err := oneOf("counts", p.Counts, "", "requests", "failures"); err != nil {
		return err
	}
	if p.Limit <= 0 {
		return fmt.Errorf("limit is required and must be positive")
	}
	if err := oneOf("calendar", p.Calendar, "", "day", "month"); err != nil {
		return err
	}
	if p.Window <= 0 && p.Calendar == "" {
		return fmt.Errorf("window is required (or calendar: day|month)")
	}
	if _, err := zone(p.TimeZone); err != nil {
		return err
	}
	return oneOf("on_exceed", p.OnExceed, "", "reject", "captcha", "lock")
}

// TokenBucketParams: role token-bucket. Current tokens at time t are
// min(capacity, tokens + (t − time_field) × refill_per_ms).
type TokenBucketParams struct {
	Capacity     float64       `yaml:"capacity"`
	Window       time.Duration `yaml:"window"`         // time an empty bucket takes to fill
	RefillPerMs  float64       `yaml:"refill_per_ms"`  // tokens per millisecond
	RefillPerSec float64       `yaml:"refill_per_sec"` // alternative spelling; both are filled in after loading
	Requested    float64       `yaml:"requested"`      // tokens one request takes (default 1)
	TokensField  string        `yaml:"tokens_field"`   // default "tokens"
	TimeField    string        `yaml:"time_field"`     // default "ts"
	TimeUnit     string        `yaml:"time_unit"`      // of time_field: ms (default) or s
}

// Check validates the params and fills defaults.
func (p *TokenBucketParams) Check(*Family) error {
	if p.Capacity <= 0 {
		return fmt.Errorf("capacity is required and must be positive")
	}
	if p.RefillPerMs < 0 || p.RefillPerSec < 0 || p.Window < 0 {
		return fmt.Errorf("window and refill rates must be positive")
	}
	if p.RefillPerMs > 0 && p.RefillPerSec > 0 {
		return fmt.Errorf("give refill_per_ms or refill_per_sec, not both")
	}
	if p.RefillPerSec > 0 {
		p.RefillPerMs = p.RefillPerSec / 1000
	}
	fromWindow := 0.0
	if p.Window > 0 {
		fromWindow = p.Capacity / float64(p.Window.Milliseconds())
	}
	switch {
	case p.RefillPerMs == 0 && fromWindow == 0:
		return fmt.Errorf("give window or a refill rate")
	case p.RefillPerMs == 0:
		p.RefillPerMs = fromWindow
	case fromWindow == 0:
		p.Window = time.Duration(p.Capacity / p.RefillPerMs * float64(time.Millisecond))
	case math.Abs(p.RefillPerMs-fromWindow) > 1e-9*fromWindow:
		return fmt.Errorf("refill %g/ms disagrees with capacity/window = %g/ms", p.RefillPerMs, fromWindow)
	}
	p.RefillPerSec = p.RefillPerMs * 1000
	if p.Requested == 0 {
		p.Requested = 1
	}
	if p.Requested < 0 {
		return fmt.Errorf("requested is negative")
	}
	if p.TokensField == "" {
		p.TokensField = "tokens"
	}
	if p.TimeField == "" {
		p.TimeField = "ts"
	}
	if p.TimeUnit == "" {
		p.TimeUnit = "ms"
	}
	if p.TimeUnit != "ms" && p.TimeUnit != "s" {
		return fmt.Errorf("time_unit %q: want ms or s", p.TimeUnit)
	}
	return nil
}

// SlidingWindowParams: role sliding-window, a ZSET of events scored by time.
type SlidingWindowParams struct {
	Limit     int64         `yaml:"limit"`
	Window    time.Duration `yaml:"window"`
	ScoreUnit string        `yaml:"score_unit"` // ms (default) or s
	Lock      *Ref          `yaml:"lock"`       // the lock set when the limit is exceeded
	LockFor   time.Duration `yaml:"lock_for"`
}

// Check validates the params and fills defaults.
func (p *SlidingWindowParams) Check(*Family) error {
	if p.Limit <= 0 || p.Window <= 0 {
		return fmt.Errorf("limit and window are required and must be positive")
	}
	if p.ScoreUnit == "" {
		p.ScoreUnit = "ms"
	}
	if p.LockFor < 0 {
		return fmt.Errorf("lock_for is negative")
	}
	return oneOf("score_unit", p.ScoreUnit, "ms", "s")
}

// LockParams: role lock.
type LockParams struct {
	// Value is what the holder writes: "uuid" (a holder id), "1", or
	// "epoch-ms" (the unlock time in epoch milliseconds).
	Value string `yaml:"value"`
	// Hold is how long a holder is expected to keep the lock; a lock older
	// than that is shown as held too long. 0: not given.
	Hold time.Duration `yaml:"hold"`
}

// Check validates the params and fills defaults.
func (p *LockParams) Check(*Family) error {
	if p.Hold < 0 {
		return fmt.Errorf("hold is negative")
	}
	return oneOf("value", p.Value, "uuid", "1", "epoch-ms")
}

// BloomParams: role bloom.
type BloomParams struct {
	Bits    int64  `yaml:"bits"`
	Hashes  int    `yaml:"hashes"`
	Scheme  string `yaml:"scheme"`  // crc32-javahash-double (DESIGN.md)
	Members *Ref   `yaml:"members"` // the exact set, if any
	// Purpose is what the application uses the bloom for: "filter" (the
	// default: a cache-penetration filter, shown read-only) or "ban" (a
	// ban list: support may ban and unban names through it).
	Purpose string `yaml:"purpose"`
}

// Check validates the params and fills defaults.
func (p *BloomParams) Check(*Family) error {
	if p.Bits <= 0 {
		return fmt.Errorf("bits is required and must be positive")
	}
	if p.Hashes < 1 || p.Hashes > 64 {
		return fmt.Errorf("hashes %d out of range 1..64", p.Hashes)
	}
	if p.Scheme == "" {
		p.Scheme = "crc32-javahash-double"
	}
	if p.Purpose == "" {
		p.Purpose = "filter"
	}
	if err := oneOf("purpose", p.Purpose, "filter", "ban"); err != nil {
		return err
	}
	return oneOf("scheme", p.Scheme, "crc32-javahash-double")
}

// BloomMembersParams: role bloom-members.
type BloomMembersParams struct {
	Bloom *Ref `yaml:"bloom"`
}

// Check validates the params and fills defaults.
func (p *BloomMembersParams) Check(*Family) error {
	if p.Bloom == nil {
		return fmt.Errorf("bloom is required")
	}
	return nil
}

// LeaderboardParams: role leaderboard.
type LeaderboardParams struct {
	Retained  int    `yaml:"retained"`   // entries kept after pruning; 0: unbounded
	Order     string `yaml:"order"`      // desc (default: highest first) or asc
	Member    string `yaml:"member"`     // placeholder name a member fills in meta and high_score
	Meta      *Ref   `yaml:"meta"`       // per-row details
	HighScore *Ref   `yaml:"high_score"` // per-member cached best score
}

// Check validates the params and fills defaults.
func (p *LeaderboardParams) Check(*Family) error {
	if p.Retained < 0 {
		return fmt.Errorf("retained %d is negative", p.Retained)
	}
	if p.Order == "" {
		p.Order = "desc"
	}
	if err := oneOf("order", p.Order, "desc", "asc"); err != nil {
		return err
	}
	if (p.Meta != nil || p.HighScore != nil) && !validName(p.Member) {
		return fmt.Errorf("member names the placeholder a leaderboard member fills in meta and high_score; it is required with them")
	}
	return nil
}

// LeaderboardMetaParams: role leaderboard-meta.
type LeaderboardMetaParams struct {
	Leaderboard *Ref     `yaml:"leaderboard"`
	Fields      []string `yaml:"fields"`
	// Labels titles a field's column ("durationMs" → "Duration"); a field
	// without one is titled by its name.
	Labels map[string]string `yaml:"labels"`
	// Formats says what a field's value means, so it is shown that way:
	// one of MetaFormats.
	Formats map[string]string `yaml:"formats"`
}

// Check validates the params and fills defaults.
func (p *LeaderboardMetaParams) Check(*Family) error {
	for _, m := range []map[string]string{p.Labels, p.Formats} {
		for f := range m {
			if len(p.Fields) > 0 && !slices.Contains(p.Fields, f) {
				return fmt.Errorf("%q has a label or format but is not one of fields %v", f, p.Fields)
			}
		}
	}
	for f, l := range p.Labels {
		if strings.TrimSpace(l) == "" {
			return fmt.Errorf("label of %q is empty", f)
		}
	}
	for f, m := range p.Formats {
		if err := oneOf("formats."+f, m, MetaFormats...); err != nil {
			return err
		}
	}
	return nil
}

// MetaFormats are the meanings a leaderboard-meta field may be given.
var MetaFormats = []string{MetaDurationMs, MetaEpochMs, MetaCount, MetaText}

const (
	MetaDurationMs = "duration-ms" // milliseconds, shown as a duration
	MetaEpochMs    = "epoch-ms"    // Unix time in ms, shown as a date and time
	MetaCount      = "count"       // an integer, shown with digit grouping
	MetaText       = "text"        // shown as it is
)

// BalanceParams: role balance.
type BalanceParams struct {
	Scale int    `yaml:"scale"` // decimal places the application writes
	Unit  string `yaml:"unit"`
}

// Check validates the params and fills defaults.
func (p *BalanceParams) Check(*Family) error {
	if p.Scale < 0 || p.Scale > 18 {
		return fmt.Errorf("scale %d out of range 0..18", p.Scale)
	}
	return nil
}

// QuotaParams: role quota, a counter against a limit per calendar period.
type QuotaParams struct {
	Limit    int64  `yaml:"limit"` // 0: set per subject elsewhere
	Period   string `yaml:"period"`
	Unit     string `yaml:"unit"`
	TimeZone string `yaml:"timezone"`
}

// Check validates the params and fills defaults.
func (p *QuotaParams) Check(*Family) error {
	if p.Limit < 0 {
		return fmt.Errorf("limit %d is negative", p.Limit)
	}
	if err := oneOf("period", p.Period, "day", "month"); err != nil {
		return err
	}
	if _, err := zone(p.TimeZone); err != nil {
		return err
	}
	return nil
}

// ReservationParams: role reservation.
type ReservationParams struct {
	Unit   string `yaml:"unit"`
	Budget *Ref   `yaml:"budget"` // the quota the reservation is charged to
}

// Check: the params need no validation.
func (p *ReservationParams) Check(*Family) error { return nil }

// ConcurrencySetParams: role concurrency-set.
type ConcurrencySetParams struct {
	Limit int64 `yaml:"limit"` // 0: a deployment setting
}

// Check validates the params and fills defaults.
func (p *ConcurrencySetParams) Check(*Family) error {
	if p.Limit < 0 {
		return fmt.Errorf("limit %d is negative", p.Limit)
	}
	return nil
}

// StatsParams: role stats.
type StatsParams struct {
	Fields   []string `yaml:"fields"`
	Registry *Ref     `yaml:"registry"` // the set naming every stats key
}

// Check: the params need no validation.
func (p *StatsParams) Check(*Family) error { return nil }

// IndexParams: role index. Each member (set, zset, list) or the value
// (string) fills the single placeholder of Of.
type IndexParams struct {
	Of *Ref `yaml:"of"`
}

// Check: the params need no validation.
func (p *IndexParams) Check(*Family) error { return nil }
