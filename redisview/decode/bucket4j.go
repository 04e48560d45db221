package decode

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"time"
	"unicode/utf16"
)

// maxBucket4j bounds the value read: 64 bandwidths with long ids stay far
// below it; anything longer is not a bucket state.
const maxBucket4j = 16 << 10

// maxBandwidths is the sane bound on a bucket's bandwidth count.
const maxBandwidths = 64

// skewLimit: a last refill further than this from now suggests the writer
// uses a custom clock (BUCKET4J-STATE.md).
const skewLimit = 24 * time.Hour

// Bucket4jBandwidth is one limit of a Bucket4j bucket, refilled to Now.
type Bucket4jBandwidth struct {
	ID           string
	Capacity     int64
	RefillTokens int64
	RefillPeriod time.Duration
	Intervally   bool // refills whole RefillTokens per period; else greedy
	LastRefill   time.Time
	Stored       int64 // tokens as written
	Tokens       int64 // refilled to Now
	ToFull       time.Duration
}

// Bucket4j is a Bucket4j 8.19 RemoteBucketState (BUCKET4J-STATE.md),
// decoded read-only, with its tokens refilled to Now.
type Bucket4j struct {
	Now        time.Time
	Format     int32
	Bandwidths []Bucket4jBandwidth
	Tokens     int64 // available: the least over bandwidths; may be negative
	ToFull     time.Duration
	Consumed   int64 // running total (RemoteStat)
	HasVersion bool
	Version    int64
	ClockSkew  bool // a last refill more than a day from Now
	TTL        time.Duration
}

// errLayout: the bytes are not a state this decoder knows.
var errLayout = errors.New("layout")

// DecodeBucket4j parses b strictly; any deviation from the documented
// layout is an error, never a guess.
func DecodeBucket4j(b []byte, now time.Time) (Bucket4j, error) {
	r := &b4reader{b: b}
	out := Bucket4j{Now: now, Format: r.i32()}
	if out.Format != 1 && out.Format != 2 {
		return Bucket4j{}, errLayout
	}
	if r.i32() != 1 { // BucketConfiguration format
		return Bucket4j{}, errLayout
	}
	n := r.i32()
	if n < 1 || n > maxBandwidths {
		return Bucket4j{}, errLayout
	}
	for range n {
		if r.i32() != 1 {
			return Bucket4j{}, errLayout
		}
		bw := Bucket4jBandwidth{Capacity: r.i64()}
		r.i64() // initial tokens
		period := r.i64()
		bw.RefillTokens = r.i64()
		bw.Intervally = r.bool()
		r.i64()  // time of first refill
		r.bool() // adaptive initial tokens
		if r.bool() {
			bw.ID = r.utf()
		}
		if r.err != nil || bw.Capacity <= 0 || period <= 0 || bw.RefillTokens <= 0 {
			return Bucket4j{}, errLayout
		}
		bw.RefillPeriod = time.Duration(period)
		out.Bandwidths = append(out.Bandwidths, bw)
	}
	if r.i32() != 3 || r.i32() != 1 || r.i32() != 3*n {
		return Bucket4j{}, errLayout
	}
	nowNs := now.UnixNano()
	out.Tokens = math.MaxInt64
	for i := range out.Bandwidths {
		bw := &out.Bandwidths[i]
		last, size, re := r.i64(), r.i64(), r.i64()
		bw.LastRefill = time.Unix(0, last).UTC()
		bw.Stored = size
		bw.Tokens = refillBucket4j(bw, last, size, re, nowNs)
		bw.ToFull = toFull(bw, re, nowNs-last)
		out.Tokens = min(out.Tokens, bw.Tokens)
		out.ToFull = max(out.ToFull, bw.ToFull)
		if d := now.Sub(bw.LastRefill); d > skewLimit || d < -skewLimit {
			out.ClockSkew = true
		}
	}
	if r.i32() != 1 { // RemoteStat format
		return Bucket4j{}, errLayout
	}
	out.Consumed = r.i64()
	if out.Format == 2 {
		if out.HasVersion = r.bool(); out.HasVersion {
			out.Version = r.i64()
		}
	}
	if r.err != nil || r.off != len(b) {
		return Bucket4j{}, errLayout
	}
	return out, nil
}

// refillBucket4j is the tokens at nowNs, per BUCKET4J-STATE.md.
func refillBucket4j(bw *Bucket4jBandwidth, last, size, re, nowNs int64) int64 {
	if nowNs <= last || size >= bw.Capacity {
		return size
	}
	elapsed := new(big.Int).Sub(big.NewInt(nowNs), big.NewInt(last))
	p, t := big.NewInt(int64(bw.RefillPeriod)), big.NewInt(bw.RefillTokens)
	var add *big.Int
	if bw.Intervally {
		add = new(big.Int).Mul(new(big.Int).Quo(elapsed, p), t)
	} else {
		num := new(big.Int).Mul(t, elapsed)
		num.Add(num, big.NewInt(re))
		add = num.Quo(num, p)
	}
	s := new(big.Int).Add(big.NewInt(size), add)
	if s.Cmp(big.NewInt(bw.Capacity)) >= 0 {
		return bw.Capacity
	}
	return s.Int64()
}

// toFull is how long the bandwidth needs from its refilled tokens to
// capacity: greedy, continuously; intervally, to the period boundary that
// completes it (periods count from the last refill; elapsed is now − it).
func toFull(bw *Bucket4jBandwidth, re, elapsed int64) time.Duration {
	missing := bw.Capacity - bw.Tokens
	if missing <= 0 {
		return 0
	}
	p := big.NewInt(int64(bw.RefillPeriod))
	var ns *big.Int
	if bw.Intervally {
		periods := (missing + bw.RefillTokens - 1) / bw.RefillTokens
		ns = new(big.Int).Mul(big.NewInt(periods), p)
		if elapsed > 0 { // part of the current period has passed
			ns.Sub(ns, big.NewInt(elapsed%int64(bw.RefillPeriod)))
		}
	} else {
		num := new(big.Int).Mul(big.NewInt(missing), p)
		num.Sub(num, big.NewInt(re))
		den := big.NewInt(bw.RefillTokens)
		num.Add(num, new(big.Int).Sub(den, big.NewInt(1)))
		ns = num.Quo(num, den)
	}
	if !ns.IsInt64() {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns.Int64())
}

type b4reader struct {
	b   []byte
	off int
	err error
}

func (r *b4reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b)-r.off < n {
		r.err = errLayout
		return make([]byte, n)
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out
}

func (r *b4reader) i32() int32 { return int32(binary.BigEndian.Uint32(r.take(4))) }
func (r *b4reader) i64() int64 { return int64(binary.BigEndian.Uint64(r.take(8))) }

func (r *b4reader) bool() bool {
	switch r.take(1)[0] {
	case 0:
		return false
	case 1:
		return true
	}
	r.err = errLayout
	return false
}

// utf reads Java's writeUTF: a uint16 length, then modified UTF-8.
func (r *b4reader) utf() string {
	n := int(binary.BigEndian.Uint16(r.take(2)))
	b := r.take(n)
	if r.err != nil {
		return ""
	}
	var units []uint16
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80 && c != 0:
			units = append(units, uint16(c))
			i++
		case c&0xE0 == 0xC0 && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
			units = append(units, uint16(c&0x1F)<<6|uint16(b[i+1]&0x3F))
			i += 2
		case c&0xF0 == 0xE0 && i+2 < len(b) && b[i+1]&0xC0 == 0x80 && b[i+2]&0xC0 == 0x80:
			units = append(units, uint16(c&0x0F)<<12|uint16(b[i+1]&0x3F)<<6|uint16(b[i+2]&0x3F))
			i += 3
		default:
			r.err = errLayout
			return ""
		}
	}
	return string(utf16.Decode(units))
}
