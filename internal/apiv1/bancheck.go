package apiv1

import "github.com/keydeck/keydeck/redisview/bans"

// BanCheck is a name checked against every ban list and filter of a
// connection's pack, decided as the application decides: its bloom
// first, then, on a hit, the exact set. The top-level booleans are over
// the ban lists (purpose ban): true when one list says so, false when
// every list was read and none does, null when a list that could change
// the answer was not read (unread says which and why).
type BanCheck struct {
	Conn     string         `json:"conn"`
	Name     Name           `json:"name"`
	Banned   *bool          `json:"banned" doc:"The application refuses the name: a ban list's bloom has all its bits and its set holds it. null: not every ban list was read."`
	BloomHit *bool          `json:"bloom_hit" doc:"A ban list's bloom has all of the name's bits set. null: not every ban list was read."`
	InSet    *bool          `json:"in_set" doc:"A ban list's exact set holds the name. null: not every ban list was read."`
	Lists    []BanListCheck `json:"lists" doc:"The name against each list, ban lists and read-only filters."`
	Unread   []Unread       `json:"unread" doc:"What could not be read: its answer is unknown, not false."`
}

// BanListCheck is the name against one bloom and its exact set.
type BanListCheck struct {
	List     string `json:"list" doc:"The bloom family's id."`
	Purpose  string `json:"purpose" enum:"ban,filter" doc:"ban: a ban list (support may ban and unban); filter: read-only."`
	DB       int    `json:"db"`
	BloomKey Name   `json:"bloom_key"`
	SetKey   Name   `json:"set_key"`
	// Read: false when the list is sensitive or could not be read; the
	// fields below are then null.
	Read      bool          `json:"read"`
	BloomHit  *bool         `json:"bloom_hit"`
	InSet     *bool         `json:"in_set"`
	Listed    *bool         `json:"listed" doc:"The application finds the name in this list (a ban list: banned)."`
	Verdict   *string       `json:"verdict" enum:"listed,not-listed,false-positive,missed" doc:"missed: in the set without its bloom bits, so the application never asks the set."`
	Words     string        `json:"words,omitempty" doc:"The verdict in words."`
	Positions []BitPosition `json:"positions" doc:"The name's bloom bits."`
}

// BitPosition is one of a name's bloom bits.
type BitPosition struct {
	Offset int64 `json:"offset"`
	Bit    int   `json:"bit" minimum:"0" maximum:"1"`
}

// Unread is one thing a read could not read, and why.
type Unread struct {
	What string `json:"what" doc:"What was not read (a list's id)."`
	Why  string `json:"why"`
}

// BanCheckOf maps the reads of every list (bans.ReadPage with the name
// as Check); errText words a read error (the connection's state first).
func BanCheckOf(conn, name string, reads []bans.ListRead, errText func(error) string) BanCheck {
	out := BanCheck{Conn: conn, Name: Name(name), Lists: []BanListCheck{}, Unread: []Unread{}}
	var banned, hit, inSet tri
	lists := 0
	for _, r := range reads {
		l := r.List
		lc := BanListCheck{List: l.ID, Purpose: "filter", DB: l.DB, BloomKey: Name(l.BloomKey), SetKey: Name(l.SetKey), Positions: []BitPosition{}}
		if l.Bans {
			lc.Purpose = "ban"
			lists++
		}
		switch {
		case r.Sensitive:
			out.Unread = append(out.Unread, Unread{What: l.ID, Why: "the pack marks this bloom or its set sensitive: it is never read"})
		case r.CheckErr != nil || r.Check == nil:
			out.Unread = append(out.Unread, Unread{What: l.ID, Why: errText(r.CheckErr)})
		default:
			ch := r.Check
			listed := ch.Verdict == bans.Listed
			v := string(ch.Verdict)
			lc.Read, lc.BloomHit, lc.InSet, lc.Listed, lc.Verdict, lc.Words = true, &ch.BloomHit, &ch.InSet, &listed, &v, ch.Words
			for _, p := range ch.Positions {
				lc.Positions = append(lc.Positions, BitPosition{Offset: p.Offset, Bit: p.Bit})
			}
		}
		if l.Bans {
			banned.add(lc.Listed)
			hit.add(lc.BloomHit)
			inSet.add(lc.InSet)
		}
		out.Lists = append(out.Lists, lc)
	}
	if lists == 0 {
		out.Unread = append(out.Unread, Unread{What: "ban lists", Why: "the connection's pack describes no ban list (a bloom of purpose ban with an exact set)"})
		return out
	}
	out.Banned, out.BloomHit, out.InSet = banned.value(), hit.value(), inSet.value()
	return out
}

// tri is an "any of" over answers some of which may be unknown: true when
// one is true, false when all are known and false, else unknown.
type tri struct{ yes, unknown bool }

func (t *tri) add(b *bool) {
	switch {
	case b == nil:
		t.unknown = true
	case *b:
		t.yes = true
	}
}

func (t tri) value() *bool {
	if t.yes {
		v := true
		return &v
	}
	if t.unknown {
		return nil
	}
	v := false
	return &v
}
