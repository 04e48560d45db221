package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/value"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// streamGroupsEvery: the key page polls every second or so, and a
// stream's groups cost the server O(groups × consumers) to list; they are
// read at most this often per key, for everyone looking at it.
const streamGroupsEvery = 10 * time.Second

// streamGroups reads a stream's consumer groups for its key page: names
// and entry IDs only, so a stream of a sensitive family shows them too.
func (a *App) streamGroups(ctx context.Context, conn *redisview.Conn, db int, key string) *views.StreamGroupsVM {
	sg := sharedEvery(ctx, a, conn.Name+"\x00"+strconv.Itoa(db)+"\x00"+key+"\x00streamgroups", "", streamGroupsEvery,
		func(ctx context.Context) value.StreamGroups { return value.ReadStreamGroups(ctx, conn, db, key) })
	return streamGroupsVM(sg)
}

func streamGroupsVM(sg value.StreamGroups) *views.StreamGroupsVM {
	vm := &views.StreamGroupsVM{Err: sg.Err}
	if sg.Err == "" && len(sg.Groups) == 0 {
		vm.Empty = "No consumer group reads this stream (XGROUP CREATE makes one)."
	}
	if sg.More > 0 {
		vm.More = fmt.Sprintf("%s more not shown (the first %d are).", format.Plural(int64(sg.More), "group", "groups"), value.MaxGroups)
	}
	for _, g := range sg.Groups {
		gv := views.StreamGroupVM{Name: g.Name, Consumers: format.Plural(g.Consumers, "consumer", "consumers"),
			Pending: format.Count(g.Pending), LastDelivered: g.LastDelivered,
			EntriesRead: "entries read " + optText(g.EntriesRead, format.Count), ConsumersNote: g.ConsumersErr, PendingErr: g.PendingErr}
		if g.Lag.OK {
			gv.Lag, gv.LagBad = format.Count(g.Lag.V), g.Lag.V > 0
		} else {
			gv.Lag = g.Lag.Why
		}
		for _, c := range g.ConsumerList {
			row := views.StreamConsumerRow{Name: c.Name, Pending: format.Count(c.Pending), Idle: format.Duration(c.Idle), Inactive: "unknown (before Redis 7.2)"}
			if c.Inactive >= 0 {
				row.Inactive = format.Duration(c.Inactive)
			}
			gv.ConsumerRows = append(gv.ConsumerRows, row)
		}
		if g.MoreConsumers > 0 {
			gv.ConsumersNote = fmt.Sprintf("%s more not shown.", format.Plural(int64(g.MoreConsumers), "consumer", "consumers"))
		}
		switch {
		case g.Skipped != "":
			gv.ConsumersNote = "Consumers not listed: " + g.Skipped + "."
			gv.Summary = format.Count(g.Pending) + " pending."
		case g.PendingErr == "":
			gv.Summary = pendingSummary(g.Summary)
		}
		for _, p := range g.Oldest {
			gv.Oldest = append(gv.Oldest, views.PendingRow{ID: p.ID, Consumer: p.Consumer, Idle: format.Duration(p.Idle), Deliveries: format.Count(p.Deliveries)})
		}
		vm.Groups = append(vm.Groups, gv)
	}
	return vm
}

func pendingSummary(s value.PendingSummary) string {
	if s.Count == 0 {
		return "Nothing pending: every delivered entry was acknowledged."
	}
	var per []string
	for _, c := range s.PerConsumer {
		per = append(per, views.EscapeName(c.Name)+" "+format.Count(c.Count))
	}
	out := fmt.Sprintf("%s pending, IDs %s … %s; by consumer: %s", format.Count(s.Count), s.Lower, s.Higher, strings.Join(per, ", "))
	if s.More > 0 {
		out += fmt.Sprintf(" and %s more", format.Plural(int64(s.More), "consumer", "consumers"))
	}
	return out
}
