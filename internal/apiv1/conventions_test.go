package apiv1

import (
	"encoding/json"
	"testing"
	"time"
)

func TestNameCrossesJSONByteForByte(t *testing.T) {
	for _, tc := range []struct {
		name Name
		want string
	}{
		{"plain", `"plain"`},
		{"", `""`},
		{"conf:\xff", `{"b64":"Y29uZjr/"}`},
		{"\xEF\xBF\xBD", "\"\xEF\xBF\xBD\""},
		{"<b>é</b>", `"\u003cb\u003eé\u003c/b\u003e"`},
		{` {"b64":"eA=="} `, `" {\"b64\":\"eA==\"} "`},
	} {
		b, err := json.Marshal(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("marshal %q = %s, want %s", tc.name, b, tc.want)
		}
		var back Name
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if back != tc.name {
			t.Errorf("round trip of %q gave %q", tc.name, back)
		}
	}
	var n Name
	if err := json.Unmarshal([]byte(`{"b64":"not base64!"}`), &n); err == nil {
		t.Error("bad base64 was accepted")
	}
}

func TestListNextIsNullOnTheLastPage(t *testing.T) {
	b, _ := json.Marshal(List[int]{Items: []int{}})
	if string(b) != `{"items":[],"next":null}` {
		t.Errorf("got %s", b)
	}
}

func TestMillis(t *testing.T) {
	for d, want := range map[time.Duration]int64{-2 * time.Second: -1, -1: -1, 0: 0, 1500 * time.Microsecond: 1, time.Minute: 60000} {
		if got := Millis(d); got != want {
			t.Errorf("Millis(%v) = %d, want %d", d, got, want)
		}
	}
}
