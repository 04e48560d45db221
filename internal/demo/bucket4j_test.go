package demo

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
	"time"
)

// Golden bytes were produced independently with Python's struct module:
//
//	MIN = -2**63
//	b  = struct.pack('>iii', 1, 1, 1)
//	b += struct.pack('>iqqqq?q??', 1, 10, 10, 1_000_000_000, 10, False, MIN, False, False)
//	b += struct.pack('>iii', 3, 1, 3) + struct.pack('>qqq', 1_751_781_234_567_000_000, 7, 250_000_000)
//	b += struct.pack('>iq', 1, 3)
//
//	idb = 'é'.encode() + b'\xc0\x80' + bytes.fromhex('eda0bdedb880')  # é, NUL, U+1F600 as surrogates
//	b2  = struct.pack('>iii', 2, 1, 1)
//	b2 += struct.pack('>iqqqq?q??', 1, 5, 5, 900_000_000_000, 5, True, MIN, False, True)
//	b2 += struct.pack('>H', len(idb)) + idb
//	b2 += struct.pack('>iii', 3, 1, 3) + struct.pack('>qqq', 1_000, -2, 0)
//	b2 += struct.pack('>iq?q', 1, 12, True, 7)
func TestEncodeBucketStateGolden(t *testing.T) {
	tests := []struct {
		name  string
		state BucketState
		hex   string
	}{
		{
			name: "format 1, one greedy bandwidth",
			state: BucketState{
				Format: 1,
				Bandwidths: []Bandwidth{{Capacity: 10, InitialTokens: 10, RefillPeriodNanos: 1e9,
					RefillTokens: 10, TimeOfFirstRefillMillis: NotAligned}},
				States:         []BandwidthState{{1_751_781_234_567_000_000, 7, 250_000_000}},
				ConsumedTokens: 3,
			},
			hex: "00000001000000010000000100000001000000000000000a000000000000000a000000003b9aca00000000000000000a0080000000000000000000000000030000000100000003184f93c0628fafc00000000000000007000000000ee6b280000000010000000000000003",
		},
		{
			name: "format 2, intervally, id in modified UTF-8, config version",
			state: BucketState{
				Format: 2,
				Bandwidths: []Bandwidth{{Capacity: 5, InitialTokens: 5, RefillPeriodNanos: 900_000_000_000,
					RefillTokens: 5, Intervally: true, TimeOfFirstRefillMillis: NotAligned, ID: "é\x00😀"}},
				States:           []BandwidthState{{1_000, -2, 0}},
				ConsumedTokens:   12,
				HasConfigVersion: true,
				ConfigVersion:    7,
			},
			hex: "0000000200000001000000010000000100000000000000050000000000000005000000d18c2e280000000000000000050180000000000000000001000ac3a9c080eda0bdedb88000000003000000010000000300000000000003e8fffffffffffffffe000000000000000000000001000000000000000c010000000000000007",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, _ := hex.DecodeString(tt.hex)
			got := EncodeBucketState(tt.state)
			if !bytes.Equal(got, want) {
				t.Fatalf("encoded\n got %x\nwant %x", got, want)
			}
			back, err := decodeBucketState(got)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(back, tt.state) {
				t.Errorf("round trip\n got %+v\nwant %+v", back, tt.state)
			}
		})
	}
}

func TestEncodeBucketStateSizes(t *testing.T) {
	one := newBucket(1, []Bandwidth{{Capacity: 100, InitialTokens: 100, RefillPeriodNanos: int64(time.Minute),
		RefillTokens: 100, TimeOfFirstRefillMillis: NotAligned}}, 0)
	if n := len(EncodeBucketState(one)); n != 107 {
		t.Errorf("one bandwidth, format 1: %d bytes, want 107", n)
	}
	one.Format = 2
	if n := len(EncodeBucketState(one)); n != 108 {
		t.Errorf("one bandwidth, format 2 without version: %d bytes, want 108", n)
	}
}

func TestDecodeBucketStateRefusesForeignLayouts(t *testing.T) {
	good := EncodeBucketState(newBucket(1, []Bandwidth{{Capacity: 1, InitialTokens: 1,
		RefillPeriodNanos: 1, RefillTokens: 1, TimeOfFirstRefillMillis: NotAligned}}, 0))
	bad := map[string][]byte{
		"trailing byte": append(bytes.Clone(good), 0),
		"truncated":     good[:len(good)-1],
		"format 3":      append([]byte{0, 0, 0, 3}, good[4:]...),
		"empty":         nil,
	}
	for name, b := range bad {
		if _, err := decodeBucketState(b); !errors.Is(err, errBucketState) {
			t.Errorf("%s: err = %v, want errBucketState", name, err)
		}
	}
}

func TestBucketRefill(t *testing.T) {
	sec := int64(time.Second)
	greedy := Bandwidth{Capacity: 10, InitialTokens: 10, RefillPeriodNanos: 3 * sec, RefillTokens: 1,
		TimeOfFirstRefillMillis: NotAligned}
	s := newBucket(1, []Bandwidth{greedy}, 0)
	for range 10 {
		if !s.tryConsume(1, 0) {
			t.Fatal("a full bucket refused a token")
		}
	}
	if s.tryConsume(1, sec) {
		t.Fatal("an empty bucket gave a token one second into a three second refill")
	}
	// 1 s then 2 s: the carried rounding error must add up to one token.
	s.refill(sec)
	s.refill(3 * sec)
	if got := s.States[0].Tokens; got != 1 {
		t.Errorf("greedy after 3 s split 1+2: %d tokens, want 1 (rounding error lost)", got)
	}
	if s.ConsumedTokens != 10 {
		t.Errorf("consumed = %d, want 10", s.ConsumedTokens)
	}

	interval := Bandwidth{Capacity: 5, InitialTokens: 0, RefillPeriodNanos: 10 * sec, RefillTokens: 5,
		Intervally: true, TimeOfFirstRefillMillis: NotAligned}
	s = newBucket(1, []Bandwidth{interval}, 0)
	s.refill(9 * sec)
	if s.States[0].Tokens != 0 || s.States[0].LastRefillNanos != 0 {
		t.Errorf("intervally before one period: %+v, want untouched", s.States[0])
	}
	s.refill(25 * sec)
	if s.States[0].Tokens != 5 || s.States[0].LastRefillNanos != 20*sec {
		t.Errorf("intervally after 2.5 periods: %+v, want 5 tokens, last refill at 20 s", s.States[0])
	}

	if got := worstCaseTimeToFullNanos([]Bandwidth{greedy, interval}); got != 30*sec {
		t.Errorf("worst case time to full = %d, want 30 s", got)
	}
}
