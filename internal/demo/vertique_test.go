package demo

import "testing"

// Expected values from Python's hashlib and hmac:
//
//	sec = b'keydeck-demo-vertique-secret-2026'
//	msg = 'login-attempts:3:6:李雷,'
//	hashlib.sha256(sec).hexdigest()[:8]
//	hmac.new(sec, msg.encode(), hashlib.sha256).hexdigest()
func TestVertiqueKey(t *testing.T) {
	canon := CanonicalKey("李雷")
	if canon != "6:李雷," {
		t.Fatalf("CanonicalKey = %q, want byte-length netstring", canon)
	}
	got := VertiqueKey(VertiqueNamespace, DemoSecret, "login-attempts", "3", canon)
	want := "vertique:rate-limit:v1:150cfbcb:54f4a50bcf633847de7bd66b93bd91ee6fb3e1b51b5477967e078161e24b620c"
	if got != want {
		t.Errorf("VertiqueKey =\n %s\nwant\n %s", got, want)
	}
	if fp := VertiqueFingerprint(previousDemoSecret); fp != "a54f18af" {
		t.Errorf("previous generation fingerprint = %s, want a54f18af", fp)
	}
}

func TestCanonicalKeyIsInjective(t *testing.T) {
	pairs := [][2][]string{
		{{"a:b", "c"}, {"a", "b:c"}},
		{{"a,", "b"}, {"a", ",b"}},
		{{""}, {}},
		{{"", ""}, {""}},
		{{"1:a,"}, {"a"}},
	}
	for _, p := range pairs {
		if CanonicalKey(p[0]...) == CanonicalKey(p[1]...) {
			t.Errorf("%q and %q encode alike: %q", p[0], p[1], CanonicalKey(p[0]...))
		}
	}
}
