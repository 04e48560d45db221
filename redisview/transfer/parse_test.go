package transfer_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/redisview/transfer"
)

// Base64 is read in every spelling people and tools write: standard or
// URL-safe, padded or not.
func TestBytesReadsEveryBase64(t *testing.T) {
	want := "\xfb\xff\xbf\x00k" // standard "+/+/AGs=" vs URL-safe "-_-_AGs"
	for _, b := range []string{"+/+/AGs=", "+/+/AGs", "-_-_AGs=", "-_-_AGs"} {
		r, err := transfer.ParseLine([]byte(`{"key":{"b64":"` + b + `"},"type":"string","value":"v"}`))
		if err != nil || string(r.Key) != want {
			t.Errorf("%s: %q %v", b, r.Key, err)
		}
	}
	for _, bad := range []string{`{"b64":"***"}`, `{"b64":"AA==","x":1}`, `{}`, `12`} {
		if _, err := transfer.ParseLine([]byte(`{"key":` + bad + `,"type":"string","value":"v"}`)); err == nil {
			t.Errorf("key %s read", bad)
		}
	}
}

// Scores: numbers, infinities as strings, strings Redis reads; NaN never.
func TestScores(t *testing.T) {
	r, err := transfer.ParseLine([]byte(`{"key":"z","type":"zset","value":[["a","inf"],["b","-inf"],["c","+inf"],["d",1.5],["e","2.25"],{"member":"f","score":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{math.Inf(1), math.Inf(-1), math.Inf(1), 1.5, 2.25, 3}
	if len(r.Scored) != len(want) {
		t.Fatalf("%d scores read, want %d", len(r.Scored), len(want))
	}
	for i, s := range r.Scored {
		if s.Score != want[i] {
			t.Errorf("score %d: %v, want %v", i, s.Score, want[i])
		}
	}
	if _, err := transfer.ParseLine([]byte(`{"key":"z","type":"zset","value":[["a","nan"]]}`)); err == nil {
		t.Error("a NaN score read")
	}
}

// A bad file is refused at its first bad line, which the error names.
func TestReadAllNamesTheLine(t *testing.T) {
	good := `{"key":"a","type":"string","ttl_ms":null,"value":"x"}`
	for _, tt := range []struct {
		file string
		line int
		says string
	}{
		{good + "\n\n" + `{"key":"b","type":"string","ttl_ms":-5,"value":"x"}`, 3, "ttl_ms"},
		{good + "\n" + `{"key":"b","type":"hash","value":[]}`, 2, "empty"},
		{good + "\n" + `{"key":"b","type":"list","value":["x"],"extra":1}`, 2, "extra"},
		{good + "\n" + `{"key":"b","type":"json","value":"x"}`, 2, "json"},
		{good + "\n" + strings.Replace(good, `"x"`, `"y"`, 1), 2, "already on line 1"},
		{good + "\n" + `{"error":"export cut short: EOF"}`, 2, "error"},
		{good + "\n" + `{"key":"s","type":"stream","value":{"entries":[{"id":"5","fields":[["a","b"]]}]}}`, 2, "MS-SEQ"},
		{good + "\n" + `{"key":"s","type":"string","withheld":"sensitive","value":"x"}`, 2, "withheld"},
		{"not json", 1, "JSON"},
	} {
		_, err := transfer.ReadAll(strings.NewReader(tt.file), transfer.DefaultLimits)
		var le *transfer.LineError
		if !errors.As(err, &le) || le.Line != tt.line || !strings.Contains(err.Error(), tt.says) || !errors.Is(err, transfer.ErrLine) {
			t.Errorf("%q: %v, want line %d saying %q", tt.file, err, tt.line, tt.says)
		}
	}
	if _, err := transfer.ReadAll(strings.NewReader(good+"\n"+strings.Repeat("x", 200)), transfer.Limits{LineBytes: 100, Lines: 10}); err == nil || !strings.Contains(err.Error(), "line 2: longer than 100 bytes") {
		t.Errorf("long line: %v", err)
	}
	if _, err := transfer.ReadAll(strings.NewReader(good+"\n"+strings.Replace(good, `"a"`, `"b"`, 1)), transfer.Limits{LineBytes: 100, Lines: 1}); err == nil || !strings.Contains(err.Error(), "line 2: more than 1 keys") {
		t.Errorf("too many lines: %v", err)
	}
}
