package handlers

import "testing"

func TestSafeNext(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"/c/main":             "/c/main",
		"/audit?user=a":       "/audit?user=a",
		"":                    "/",
		"https://evil":        "/",
		"//evil.example":      "/",
		"/\\evil.example":     "/",
		"/\t/evil.example":    "/",
		"/%09/evil.example":   "/%09/evil.example", // stays a path: %09 is not decoded by browsers in Location
		"/\x00/evil":          "/",
		"javascript:alert(1)": "/",
	}
	for in, want := range tests {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
