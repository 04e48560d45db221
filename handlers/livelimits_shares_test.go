package handlers

import (
	"fmt"
	"net/url"
	"testing"
)

func TestLiveSharesCountAddressOverUsers(t *testing.T) {
	t.Parallel()
	s := newLiveShares()
	s.addr = shareCaps{conns: 100, topics: 20}
	lim := func(user string) []shareLimit {
		return []shareLimit{{holder: "user:" + user, shareCaps: s.user}, {holder: "addr:10.0.0.1", shareCaps: s.addr}}
	}
	relVera, err := s.take(lim("vera"), filterTopics("v", 16))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.take(lim("sam"), filterTopics("s", 16)); err == nil {
		t.Fatal("the address went over its 20 topics")
	}
	// Refused requests take nothing: sam's own share is untouched.
	if got := s.m["user:sam"]; got != nil {
		t.Fatalf("a refused request left a share behind: %+v", got)
	}
	relVera()
	relVera() // idempotent
	if _, err := s.take(lim("sam"), filterTopics("s", 16)); err != nil {
		t.Fatalf("after vera left: %v", err)
	}
	if s.m["user:vera"] != nil {
		t.Fatal("vera's share outlived her websockets")
	}
}

// filterTopics names n distinct audit topics.
func filterTopics(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "audit:plain:" + url.Values{"key": {fmt.Sprintf("%s-%d", prefix, i)}}.Encode()
	}
	return out
}
