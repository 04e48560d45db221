package leaderboard

import "strconv"

// MoveKind says how a row moved between two reads.
type MoveKind int

const (
	MoveSame MoveKind = iota // same rank
	MoveUp                   // closer to the top (smaller rank)
	MoveDown                 // further from the top
	MoveNew                  // not in the previous read
)

func (k MoveKind) String() string {
	switch k {
	case MoveSame:
		return "same"
	case MoveUp:
		return "up"
	case MoveDown:
		return "down"
	case MoveNew:
		return "new"
	}
	return "MoveKind(" + strconv.Itoa(int(k)) + ")"
}

// Move is how one member of the current read moved.
type Move struct {
	Kind         MoveKind
	From         int64 // previous rank, -1 for new
	ScoreChanged bool  // false for new
}

// Moves compares two reads of the same window and says, per member of cur,
// how it moved. "New" means absent from prev: a new entry, or one that
// entered the window from outside it.
func Moves(prev, cur []Entry) map[string]Move {
	before := make(map[string]Entry, len(prev))
	for _, e := range prev {
		before[e.Member] = e
	}
	out := make(map[string]Move, len(cur))
	for _, e := range cur {
		p, ok := before[e.Member]
		if !ok {
			out[e.Member] = Move{Kind: MoveNew, From: -1}
			continue
		}
		m := Move{Kind: MoveSame, From: p.Rank, ScoreChanged: p.Score != e.Score}
		switch {
		case e.Rank < p.Rank:
			m.Kind = MoveUp
		case e.Rank > p.Rank:
			m.Kind = MoveDown
		}
		out[e.Member] = m
	}
	return out
}
