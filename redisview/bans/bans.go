// Package bans reads the bloom filters a schema pack describes (role
// bloom) together with their exact sets (role bloom-members), and decides
// for a name exactly as the application does: the bloom first (a miss is
// "not there", fail-open), then, on a hit, the exact set. A bloom whose
// pack says purpose "ban" is a ban list (eIsland's user:ban:bloom and
// user:ban:set); the others (version and wallpaper filters) are read-only.
//
// Every read is bounded: GETBIT and SISMEMBER per name, SSCAN pages with
// COUNT, BITCOUNT in chunks, and a consistency check that walks the set a
// bounded number of pages per step.
package bans

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// List is one bloom filter with its exact set, as a pack describes it.
type List struct {
	ID       string // the bloom family's id
	Domain   string
	DB       int
	BloomKey string
	SetKey   string
	Bits     int64
	Hashes   int
	Scheme   string
	// Bans: the pack says the bloom is a ban list (purpose ban), so
	// support may ban and unban; otherwise it is shown read-only.
	Bans        bool
	Description string
	// Sensitive: the pack marks the bloom or its set sensitive, so no
	// name, member or verdict of it is ever shown.
	Sensitive bool
	Bloom     *schema.Family
	Set       *schema.Family
}

// ErrNoList: the connection's pack has no such bloom with an exact set.
var ErrNoList = errors.New("no such bloom filter with an exact set")

// Lists returns every bloom family of the connection's pack that names a
// bloom-members companion, whose keys are fixed names in one database.
func Lists(conn *redisview.Conn) []List {
	if conn == nil || conn.Pack() == nil {
		return nil
	}
	return ListsOf(conn.Pack())
}

// ListsOf is Lists for a pack.
func ListsOf(p *schema.Pack) []List {
	var out []List
	for _, f := range p.Families {
		if l, ok := listOf(f); ok {
			out = append(out, l)
		}
	}
	// Ban lists first: they are what support comes for.
	slices.SortStableFunc(out, func(a, b List) int {
		switch {
		case a.Bans == b.Bans:
			return 0
		case a.Bans:
			return -1
		}
		return 1
	})
	return out
}

func listOf(f *schema.Family) (List, bool) {
	bp, ok := f.Params.(*schema.BloomParams)
	if f.Role != schema.RoleBloom || !ok || bp.Members == nil || bp.Members.Family == nil {
		return List{}, false
	}
	set := bp.Members.Family
	if set.Role != schema.RoleBloomMembers || len(f.DBs) != 1 || !set.InDB(f.DBs[0]) {
		return List{}, false
	}
	// Only fixed names: a bloom per placeholder value would need a SCAN
	// to find, and no pack has one.
	if len(f.Pattern.Placeholders()) > 0 {
		return List{}, false
	}
	bk, err := f.Key(map[string]string{})
	if err != nil {
		return List{}, false
	}
	sk, err := bp.Members.Key(map[string]string{})
	if err != nil {
		return List{}, false
	}
	return List{ID: f.ID, Domain: f.Domain, DB: f.DBs[0], BloomKey: bk, SetKey: sk, Bits: bp.Bits, Hashes: bp.Hashes,
		Scheme: bp.Scheme, Bans: bp.Purpose == "ban", Description: f.Description, Sensitive: f.Sensitive || set.Sensitive, Bloom: f, Set: set}, true
}

// Find returns the list whose bloom family has id, or ErrNoList.
func Find(conn *redisview.Conn, id string) (List, error) {
	for _, l := range Lists(conn) {
		if l.ID == id {
			return l, nil
		}
	}
	return List{}, fmt.Errorf("%w: %q", ErrNoList, id)
}

// ForKey returns the list whose bloom or set is key in database db.
func ForKey(p *schema.Pack, db int, key string) (List, bool) {
	if p == nil {
		return List{}, false
	}
	for _, l := range ListsOf(p) {
		if l.DB == db && (l.BloomKey == key || l.SetKey == key) {
			return l, true
		}
	}
	return List{}, false
}

// Positions are the bit offsets name takes in l's bloom, by the pinned
// scheme (redisview.BloomPositions).
func (l List) Positions(name string) []int64 { return redisview.BloomPositions(name, l.Bits, l.Hashes) }

// Verdict is the application's decision for one name.
type Verdict string

const (
	// Listed: every bit is set and the set holds the name (banned).
	Listed Verdict = "listed"
	// NotListed: the bloom says no (a bit is clear): the set is not asked.
	NotListed Verdict = "not-listed"
	// FalsePositive: every bit is set, but the set does not hold it.
	FalsePositive Verdict = "false-positive"
	// Missed: the set holds the name but a bit is clear, so the
	// application never asks the set: the entry is silently ignored.
	Missed Verdict = "missed"
)

// Decide is the application's filter: the bloom first, the set on a hit.
func Decide(bloomHit, inSet bool) Verdict {
	switch {
	case bloomHit && inSet:
		return Listed
	case bloomHit:
		return FalsePositive
	case inSet:
		return Missed
	}
	return NotListed
}

// Words says a verdict as the application acts on it, for a ban list or a
// read-only filter.
func Words(v Verdict, bans bool) string {
	yes, no := "present", "absent"
	if bans {
		yes, no = "banned", "not banned"
	}
	switch v {
	case Listed:
		return yes
	case FalsePositive:
		return "bloom says maybe, set says no: " + no + " — false positive"
	case Missed:
		return "in the set, but the bloom says no: " + no + " — the application never asks the set for it (its bloom bits are missing)"
	}
	return no
}

// Position is one bit of a name in the bloom.
type Position struct {
	Offset int64
	Bit    int
}

// Check is one name against one list.
type Check struct {
	Name      string
	Positions []Position
	BloomHit  bool // every bit set: the bloom says "maybe"
	InSet     bool
	Verdict   Verdict
	Words     string
}

// CheckName reads the name's bits (GETBIT) and membership (SISMEMBER) in
// one pipeline and decides as the application does.
func CheckName(ctx context.Context, c redis.Cmdable, l List, name string) (Check, error) {
	offs := l.Positions(name)
	pipe := c.Pipeline()
	bits := make([]*redis.IntCmd, len(offs))
	for i, off := range offs {
		bits[i] = pipe.GetBit(ctx, l.BloomKey, off)
	}
	member := pipe.SIsMember(ctx, l.SetKey, name)
	if _, err := pipe.Exec(ctx); err != nil {
		return Check{}, redisview.ReadError("checking "+strconv.Quote(name), err)
	}
	ch := Check{Name: name, BloomHit: len(offs) > 0, InSet: member.Val()}
	for i, off := range offs {
		b := int(bits[i].Val())
		ch.Positions = append(ch.Positions, Position{Offset: off, Bit: b})
		ch.BloomHit = ch.BloomHit && b == 1
	}
	ch.Verdict = Decide(ch.BloomHit, ch.InSet)
	ch.Words = Words(ch.Verdict, l.Bans)
	return ch, nil
}

// PageSize is the ban list's page.
const PageSize = 100

// maxScanCalls bounds the SSCAN calls one page takes when a filter skips
// most members: the page then ends early with a cursor to continue.
const maxScanCalls = 50

// Page is one page of a set's members.
type Page struct {
	Members []string
	Next    uint64 // cursor to continue; 0 at the end
	Count   int64  // SCARD
}

// Members reads a page of the set: SSCAN with COUNT from cursor, keeping
// those containing filter (matched by Redis, the filter glob-escaped),
// until n are found, the set is done, or maxScanCalls calls were made.
func Members(ctx context.Context, c redis.Cmdable, l List, filter string, cursor uint64, n int) (Page, error) {
	if n <= 0 {
		n = PageSize
	}
	card, err := c.SCard(ctx, l.SetKey).Result()
	if err != nil {
		return Page{}, redisview.ReadError("SCARD", err)
	}
	p := Page{Count: card}
	match := "*"
	if filter != "" {
		match = "*" + schema.EscapeGlob(filter) + "*"
	}
	seen := map[string]bool{}
	for calls := 0; calls < maxScanCalls; calls++ {
		keys, next, err := c.SScan(ctx, l.SetKey, cursor, match, int64(n)).Result()
		if err != nil {
			return Page{}, redisview.ReadError("SSCAN", err)
		}
		for _, k := range keys {
			if !seen[k] { // SSCAN may return a member twice
				seen[k] = true
				p.Members = append(p.Members, k)
			}
		}
		cursor = next
		if cursor == 0 || len(p.Members) >= n {
			break
		}
	}
	p.Next = cursor
	slices.Sort(p.Members)
	return p, nil
}

// bitcountChunk is the byte range one BITCOUNT covers: BITCOUNT is O(N),
// and 256 KiB stays well under 2 ms.
var bitcountChunk int64 = 256 << 10

// MaxBloomBytes is the longest bloom whose bits are counted (the chunks
// of one pipeline).
const MaxBloomBytes = 64 << 20

// Health is a bloom's fill and what it costs.
type Health struct {
	Exists    bool
	Bytes     int64 // STRLEN
	Counted   bool  // the bits were counted (at most MaxBloomBytes)
	SetBits   int64 // BITCOUNT
	Bits      int64 // configured
	Hashes    int
	Members   int64 // SCARD
	SetExists bool
	Fill      float64 // SetBits / Bits
	// FalsePositive is the chance that a name never added reads as a
	// bloom hit now: Fill^Hashes, from the bits actually set.
	FalsePositive float64
	// Expected is that chance were the bloom holding the set's members
	// only: (1 − e^(−k·n/m))^k. Above it, bits of removed names remain.
	Expected float64
	// Short: the string is shorter than the configured bits (bits past
	// its end read as 0, which is harmless); Long: longer.
	Short, Long bool
}

// ReadHealth counts the bloom's set bits (BITCOUNT in chunks, one
// pipeline) and the set's members.
func ReadHealth(ctx context.Context, c redis.Cmdable, l List) (Health, error) {
	pipe := c.Pipeline()
	strlen := pipe.StrLen(ctx, l.BloomKey)
	card := pipe.SCard(ctx, l.SetKey)
	if _, err := pipe.Exec(ctx); err != nil {
		return Health{}, redisview.ReadError("reading the bloom's size", err)
	}
	h := Health{Bytes: strlen.Val(), Bits: l.Bits, Hashes: l.Hashes, Members: card.Val()}
	h.Exists, h.SetExists = h.Bytes > 0, h.Members > 0
	want := (l.Bits + 7) / 8
	h.Short, h.Long = h.Exists && h.Bytes < want, h.Bytes > want
	if h.Bytes <= MaxBloomBytes {
		h.Counted = true
		if h.Bytes > 0 {
			pipe := c.Pipeline()
			var counts []*redis.IntCmd
			for start := int64(0); start < h.Bytes; start += bitcountChunk {
				end := min(start+bitcountChunk, h.Bytes) - 1
				counts = append(counts, pipe.BitCount(ctx, l.BloomKey, &redis.BitCount{Start: start, End: end}))
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return Health{}, redisview.ReadError("BITCOUNT", err)
			}
			for _, cnt := range counts {
				h.SetBits += cnt.Val()
			}
		}
		h.Fill = float64(h.SetBits) / float64(l.Bits)
		h.FalsePositive = math.Pow(min(h.Fill, 1), float64(l.Hashes))
	}
	k, m, n := float64(l.Hashes), float64(l.Bits), float64(h.Members)
	h.Expected = math.Pow(1-math.Exp(-k*n/m), k)
	return h, nil
}
