package redisview

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"redis://127.0.0.1:6379", "redis://127.0.0.1:6379"},
		{"redis://:s3cret@h:6379/2", "redis://:xxxxx@h:6379/2"},
		{"rediss://bob:s3cret@h:6380", "rediss://bob:xxxxx@h:6380"},
		{"unix://bob:s3cret@/run/redis.sock?db=1", "unix://bob:xxxxx@/run/redis.sock?db=1"},
		{"redis://h:1?password=s3cret", "redis://h:1?password=xxxxx"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
		db      int
	}{
		{"redis://127.0.0.1:6379", false, 0},
		{"redis://127.0.0.1:6379/3", false, 3},
		{"rediss://u:p@h:6380/1", false, 1},
		{"unix:///tmp/redis.sock", false, 0},
		{"http://h:1", true, 0},
		{"127.0.0.1:6379", true, 0},
		{"redis://", true, 0},
		{"redis://:s3cret@h:nope", true, 0},
		{"redis://h:1/notadb", true, 0},
	}
	for _, tt := range tests {
		opt, err := ParseURL(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseURL(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err != nil {
			if contains(err.Error(), "s3cret") {
				t.Errorf("error leaks password: %v", err)
			}
			continue
		}
		if opt.DB != tt.db {
			t.Errorf("ParseURL(%q).DB = %d, want %d", tt.in, opt.DB, tt.db)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
