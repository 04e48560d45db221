package demo

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// sliderVariant tells which of the demo's two encodings wrote part (an
// account or IP of a slider key): "standard, padded" shows "=", "+" or
// "/"; "URL-safe, unpadded" shows "-" or "_", or lacks the padding its
// length needs; "" when either could have (no padding, no + / - _);
// "mixed" when it shows both.
func sliderVariant(part string) string {
	std := strings.ContainsAny(part, "=+/")
	url := strings.ContainsAny(part, "-_") || len(part)%4 != 0
	switch {
	case std && url:
		return "mixed"
	case std:
		return "standard, padded"
	case url:
		return "URL-safe, unpadded"
	}
	return ""
}

// The seed says base64(account) and names no variant: the demo writes
// Java's default (standard, padded) for some names and URL-safe unpadded
// for others, each name always the same way, so that search and the user
// page are seen to find both.
func TestSeedWritesBothSliderEncodings(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	if err := SeedEIsland(ctx, eislandClients(s), time.Now()); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{}
	for k := range scanDB(t, s.Client(4)) {
		for _, prefix := range []string{"verify:slider:rate:create:account:", "verify:slider:fail:account:", "verify:slider:account:challenges:", "verify:slider:rate:create:ip:", "verify:slider:ip:challenges:"} {
			if part, ok := strings.CutPrefix(k, prefix); ok {
				v := sliderVariant(part)
				if _, err := base64.StdEncoding.DecodeString(part); v == "mixed" || v == "standard, padded" && err != nil {
					t.Errorf("%s: %s", k, v)
				}
				seen[v] = append(seen[v], k)
			}
		}
	}
	for _, v := range []string{"standard, padded", "URL-safe, unpadded"} {
		if len(seen[v]) < 3 {
			t.Errorf("%d slider keys in %s base64, want at least 3: %q", len(seen[v]), v, seen[v])
		}
	}
	// A name's keys all take its one encoding.
	for _, name := range users(nil, len(hostileUsers)+len(regularUsers)) {
		if got := SliderKeyPart(name); !slices.Contains([]string{base64.StdEncoding.EncodeToString([]byte(name)), base64.RawURLEncoding.EncodeToString([]byte(name))}, got) || SliderKeyPart(name) != got {
			t.Errorf("%q: %q", name, got)
		}
	}
}
