package demo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"unicode/utf16"
)

// NotAligned is Bucket4j's timeOfFirstRefillMillis for a refill that is not
// aligned to wall-clock boundaries.
const NotAligned = math.MinInt64

// Bandwidth is one Bucket4j limit as it is serialized inside the state.
type Bandwidth struct {
	Capacity          int64
	InitialTokens     int64
	RefillPeriodNanos int64
	RefillTokens      int64
	// Intervally adds RefillTokens once per whole period; otherwise the
	// refill is greedy (continuous, with a carried rounding error).
	Intervally              bool
	TimeOfFirstRefillMillis int64
	AdaptiveInitialTokens   bool
	ID                      string // "" means no id
}

// BandwidthState is the per-bandwidth part of BucketState64BitsInteger.
type BandwidthState struct {
	LastRefillNanos int64 // epoch ns from the writer's clock
	Tokens          int64
	RoundingError   int64
}

// BucketState is Bucket4j 8.19's RemoteBucketState, the whole Redis value.
type BucketState struct {
	Format           int32 // 1, or 2 which appends the configuration version
	Bandwidths       []Bandwidth
	States           []BandwidthState
	ConsumedTokens   int64 // RemoteStat running total
	HasConfigVersion bool  // only written when Format is 2
	ConfigVersion    int64
}

// EncodeBucketState writes s as Java's DataOutputStream would (big-endian,
// booleans as one byte, strings as writeUTF), the layout documented in
// BUCKET4J-STATE.md.
func EncodeBucketState(s BucketState) []byte {
	var b []byte
	i32 := func(v int32) { b = binary.BigEndian.AppendUint32(b, uint32(v)) }
	i64 := func(v int64) { b = binary.BigEndian.AppendUint64(b, uint64(v)) }
	bl := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	i32(s.Format)
	i32(1) // BucketConfiguration format
	i32(int32(len(s.Bandwidths)))
	for _, bw := range s.Bandwidths {
		i32(1)
		i64(bw.Capacity)
		i64(bw.InitialTokens)
		i64(bw.RefillPeriodNanos)
		i64(bw.RefillTokens)
		bl(bw.Intervally)
		i64(bw.TimeOfFirstRefillMillis)
		bl(bw.AdaptiveInitialTokens)
		bl(bw.ID != "")
		if bw.ID != "" {
			b = appendJavaUTF(b, bw.ID)
		}
	}
	i32(3) // BucketState64BitsInteger
	i32(1)
	i32(int32(3 * len(s.States)))
	for _, st := range s.States {
		i64(st.LastRefillNanos)
		i64(st.Tokens)
		i64(st.RoundingError)
	}
	i32(1) // RemoteStat format
	i64(s.ConsumedTokens)
	if s.Format == 2 {
		bl(s.HasConfigVersion)
		if s.HasConfigVersion {
			i64(s.ConfigVersion)
		}
	}
	return b
}

// appendJavaUTF is DataOutputStream.writeUTF: a uint16 byte length, then
// modified UTF-8, where NUL takes two bytes and characters beyond the BMP are
// written as two three-byte surrogates instead of one four-byte sequence.
func appendJavaUTF(b []byte, s string) []byte {
	var body []byte
	for _, u := range utf16.Encode([]rune(s)) {
		switch {
		case u != 0 && u < 0x80:
			body = append(body, byte(u))
		case u < 0x800:
			body = append(body, 0xC0|byte(u>>6), 0x80|byte(u&0x3F))
		default:
			body = append(body, 0xE0|byte(u>>12), 0x80|byte(u>>6&0x3F), 0x80|byte(u&0x3F))
		}
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

var errBucketState = errors.New("unrecognised bucket4j state")

// decodeBucketState reads back what EncodeBucketState writes; the simulator
// needs it to consume from a bucket it finds in Redis. It is strict because
// guessing at a foreign layout would corrupt someone else's bucket.
func decodeBucketState(b []byte) (BucketState, error) {
	r := reader{b: b}
	var s BucketState
	s.Format = r.i32()
	if s.Format != 1 && s.Format != 2 {
		return s, fmt.Errorf("%w: format %d", errBucketState, s.Format)
	}
	if r.i32() != 1 {
		return s, fmt.Errorf("%w: configuration format", errBucketState)
	}
	n := r.i32()
	if n < 1 || n > 16 {
		return s, fmt.Errorf("%w: %d bandwidths", errBucketState, n)
	}
	for range n {
		if r.i32() != 1 {
			return s, fmt.Errorf("%w: bandwidth format", errBucketState)
		}
		bw := Bandwidth{
			Capacity:          r.i64(),
			InitialTokens:     r.i64(),
			RefillPeriodNanos: r.i64(),
			RefillTokens:      r.i64(),
		}
		bw.Intervally = r.bool()
		bw.TimeOfFirstRefillMillis = r.i64()
		bw.AdaptiveInitialTokens = r.bool()
		if r.bool() {
			bw.ID = r.utf()
		}
		s.Bandwidths = append(s.Bandwidths, bw)
	}
	if r.i32() != 3 || r.i32() != 1 || r.i32() != 3*n {
		return s, fmt.Errorf("%w: state header", errBucketState)
	}
	for range n {
		s.States = append(s.States, BandwidthState{r.i64(), r.i64(), r.i64()})
	}
	if r.i32() != 1 {
		return s, fmt.Errorf("%w: stat format", errBucketState)
	}
	s.ConsumedTokens = r.i64()
	if s.Format == 2 {
		s.HasConfigVersion = r.bool()
		if s.HasConfigVersion {
			s.ConfigVersion = r.i64()
		}
	}
	if r.err != nil {
		return s, r.err
	}
	if len(r.b) != 0 {
		return s, fmt.Errorf("%w: %d trailing bytes", errBucketState, len(r.b))
	}
	return s, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		if r.err == nil {
			r.err = fmt.Errorf("%w: truncated", errBucketState)
		}
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) i32() int32 { return int32(binary.BigEndian.Uint32(r.take(4))) }
func (r *reader) i64() int64 { return int64(binary.BigEndian.Uint64(r.take(8))) }

func (r *reader) bool() bool {
	v := r.take(1)[0]
	if v > 1 && r.err == nil {
		r.err = fmt.Errorf("%w: boolean %d", errBucketState, v)
	}
	return v == 1
}

func (r *reader) utf() string {
	n := int(binary.BigEndian.Uint16(r.take(2)))
	raw := r.take(n)
	var units []uint16
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c&0xE0 == 0xC0 && i+1 < len(raw):
			units = append(units, uint16(c&0x1F)<<6|uint16(raw[i+1]&0x3F))
			i += 2
		case c&0xF0 == 0xE0 && i+2 < len(raw):
			units = append(units, uint16(c&0x0F)<<12|uint16(raw[i+1]&0x3F)<<6|uint16(raw[i+2]&0x3F))
			i += 3
		default:
			if r.err == nil {
				r.err = fmt.Errorf("%w: bad modified UTF-8", errBucketState)
			}
			return ""
		}
	}
	return string(utf16.Decode(units))
}

// newBucket is the state Bucket4j writes when a bucket is first used.
func newBucket(format int32, bws []Bandwidth, nowNanos int64) BucketState {
	s := BucketState{Format: format, Bandwidths: bws}
	for _, bw := range bws {
		s.States = append(s.States, BandwidthState{LastRefillNanos: nowNanos, Tokens: bw.InitialTokens})
	}
	return s
}

// refill follows BucketState64BitsInteger: intervally bandwidths only move
// by whole periods, greedy ones keep the sub-token remainder in the rounding
// error so no fraction of a token is ever lost between writes.
func (s *BucketState) refill(nowNanos int64) {
	for i, bw := range s.Bandwidths {
		st := &s.States[i]
		now := nowNanos
		if bw.Intervally && now > st.LastRefillNanos {
			now -= (now - st.LastRefillNanos) % bw.RefillPeriodNanos
		}
		if now <= st.LastRefillNanos {
			continue
		}
		elapsed := now - st.LastRefillNanos
		st.LastRefillNanos = now
		if st.Tokens >= bw.Capacity {
			continue
		}
		// T·elapsed overflows int64 for long idle periods; Bucket4j falls
		// back to doubles there, exact big arithmetic is simply correct.
		num := new(big.Int).Mul(big.NewInt(bw.RefillTokens), big.NewInt(elapsed))
		num.Add(num, big.NewInt(st.RoundingError))
		add, rem := new(big.Int).QuoRem(num, big.NewInt(bw.RefillPeriodNanos), new(big.Int))
		if bw.Intervally {
			rem.SetInt64(0)
		}
		room := big.NewInt(bw.Capacity - st.Tokens)
		if add.Cmp(room) >= 0 {
			st.Tokens, st.RoundingError = bw.Capacity, 0
			continue
		}
		st.Tokens += add.Int64()
		st.RoundingError = rem.Int64()
	}
}

// available is what a consume may take: the tightest bandwidth wins.
func (s *BucketState) available() int64 {
	m := int64(math.MaxInt64)
	for _, st := range s.States {
		m = min(m, st.Tokens)
	}
	return m
}

// tryConsume refills to now and takes n tokens from every bandwidth, or
// leaves the state untouched when any of them lacks them.
func (s *BucketState) tryConsume(n, nowNanos int64) bool {
	s.refill(nowNanos)
	if s.available() < n {
		return false
	}
	for i := range s.States {
		s.States[i].Tokens -= n
	}
	s.ConsumedTokens += n
	return true
}

// worstCaseTimeToFullNanos is how long an empty bucket needs to refill
// completely; Vertique's PEXPIRE adds its slack on top of it.
func worstCaseTimeToFullNanos(bws []Bandwidth) int64 {
	var worst int64
	for _, bw := range bws {
		var d int64
		if bw.Intervally {
			periods := (bw.Capacity + bw.RefillTokens - 1) / bw.RefillTokens
			d = periods * bw.RefillPeriodNanos
		} else {
			num := new(big.Int).Mul(big.NewInt(bw.Capacity), big.NewInt(bw.RefillPeriodNanos))
			den := big.NewInt(bw.RefillTokens)
			num.Add(num, new(big.Int).Sub(den, big.NewInt(1)))
			d = num.Quo(num, den).Int64()
		}
		worst = max(worst, d)
	}
	return worst
}
