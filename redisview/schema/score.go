package schema

// Key is a key name in a database, as sampled from a connection.
type Key struct {
	DB   int
	Name string
}

// MatchScore is how well a pack explains a sample of keys.
type MatchScore struct {
	Pack    *Pack
	Matched int // sampled keys the pack classifies
	Total   int // sampled keys
}

// Share is Matched/Total, 0 for an empty sample.
func (s MatchScore) Share() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Matched) / float64(s.Total)
}

// MinShare is the share of sampled keys a pack must classify to be chosen
// automatically. Below it a pack explains too little of the data for its
// views to be trusted (a gateway whose keys happen to start with "q:" next
// to a thousand unrelated keys); the user can still name the pack.
const MinShare = 0.2

// Score classifies a sample of keys with p.
func Score(p *Pack, sample []Key) MatchScore {
	c := p.Classifier()
	s := MatchScore{Pack: p, Total: len(sample)}
	for _, k := range sample {
		if _, ok := c.Classify(k.DB, k.Name); ok {
			s.Matched++
		}
	}
	return s
}

// BestPack picks the pack that classifies the largest share of the sample.
// It returns nil when the best share is below MinShare or when two packs
// explain exactly as many keys, since guessing between them would show one
// system's semantics on another's data; the score returned is then the best
// candidate's (the first of the tied ones), so the caller can say how close
// it came.
func BestPack(packs []*Pack, sample []Key) (*Pack, MatchScore) {
	var best MatchScore
	tied := false
	for i, p := range packs {
		s := Score(p, sample)
		switch {
		case i == 0 || s.Matched > best.Matched:
			best, tied = s, false
		case s.Matched == best.Matched:
			tied = true
		}
	}
	if best.Pack == nil || tied || best.Total == 0 || best.Share() < MinShare {
		return nil, best
	}
	return best.Pack, best
}
