package server_test

import (
	"fmt"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/server"
)

func TestPubSubCounts(t *testing.T) {
	s := redistest.Start(t)
	ctx := ctxT(t)
	conn := eislandConn(t, s)
	sub := s.Client(0)
	defer sub.Close()
	ps := sub.Subscribe(ctx, "orders", "orders.eu", "news")
	defer ps.Close()
	for range 3 {
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
	}
	pp := sub.PSubscribe(ctx, "audit.*")
	defer pp.Close()
	if _, err := pp.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	all := server.ReadChannels(ctx, redisview.ServerFor(conn.Client()), "")
	if all.Err != "" || all.Total != 3 || len(all.Channels) != 3 || !all.NumPat.OK || all.NumPat.V != 1 {
		t.Fatalf("all = %+v", all)
	}
	for _, c := range all.Channels {
		if !c.Subscribers.OK || c.Subscribers.V != 1 {
			t.Errorf("%s: %+v", c.Name, c.Subscribers)
		}
	}
	some := server.ReadChannels(ctx, redisview.ServerFor(conn.Client()), "orders*")
	if got := fmt.Sprint(some.Total, names(some)); got != "2 [orders orders.eu]" {
		t.Errorf("filtered: %s", got)
	}
}

func names(c server.Channels) []string {
	var out []string
	for _, ch := range c.Channels {
		out = append(out, ch.Name)
	}
	return out
}
