package redisview

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTargetClusterSeedsAndSentinel(t *testing.T) {
	tests := []struct {
		in                  string
		seeds, sentinels    []string
		master, sentinelPwd string
		db                  int
		user, pwd           string
		tls                 bool
	}{
		{in: "redis://h1:7000", seeds: []string{"h1:7000"}},
		{in: "redis://h1:7000?addr=h2:7001&addr=h3:7002", seeds: []string{"h1:7000", "h2:7001", "h3:7002"}},
		{in: "rediss://bob:pw@h1:7000?addr=h2:7001", seeds: []string{"h1:7000", "h2:7001"}, user: "bob", pwd: "pw", tls: true},
		{in: "redis+sentinel://s1:26379/mymaster", sentinels: []string{"s1:26379"}, master: "mymaster"},
		{in: "redis+sentinel://bob:pw@s1:26379,s2:26380/mymaster/3?sentinel_password=spw", sentinels: []string{"s1:26379", "s2:26380"}, master: "mymaster", db: 3, user: "bob", pwd: "pw", sentinelPwd: "spw"},
		{in: "rediss+sentinel://s1:26379/m", sentinels: []string{"s1:26379"}, master: "m", tls: true},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in)
		if err != nil {
			t.Errorf("parseTarget(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got.seeds, tt.seeds) || !slices.Equal(got.sentinels, tt.sentinels) || got.master != tt.master || got.sentinelPwd != tt.sentinelPwd {
			t.Errorf("parseTarget(%q) = seeds %v sentinels %v master %q sentinel password %q", tt.in, got.seeds, got.sentinels, got.master, got.sentinelPwd)
		}
		o := got.opts
		if o.DB != tt.db || o.Username != tt.user || o.Password != tt.pwd || (o.TLSConfig != nil) != tt.tls {
			t.Errorf("parseTarget(%q) options: db %d user %q password %q tls %v", tt.in, o.DB, o.Username, o.Password, o.TLSConfig != nil)
		}
	}
	for _, bad := range []string{
		"redis+sentinel://s1:26379",              // no master name
		"redis+sentinel://:s3cret@s1:26379,s2/m", // a sentinel without port
		"redis://:s3cret@h1:7000?addr=nope",
		"redis+sentinel://:s3cret@s1:99999/m",
	} {
		_, err := parseTarget(bad)
		if err == nil {
			t.Errorf("parseTarget(%q): no error", bad)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
}
