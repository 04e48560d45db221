package schema

// Pinned reports whether key is a key of the pattern whose named
// placeholders hold exactly the given plain values (encoded as the key
// holds them: a base64 placeholder in any encoding its class allows, see
// Encodings), every other placeholder taking some value its class accepts.
// It settles what a glob cannot: "issue-feedback:submit:ops:admin:10.0.0.1"
// is a key of {username}="ops:admin" (and of "ops", with ip
// "admin:10.0.0.1"), while "totp:security:replay:ops:admin2:1:2" is not
// one of "ops:admin", and neither is "totp:security:replay:ops:admin:x:1:2"
// (the digits classes of counter and code leave "ops:admin:x" as the only
// username). Values whose encodings combine into more than MaxKeys ways
// pin no key.
func (p *Pattern) Pinned(key string, vals map[string]string) bool {
	encs, err := p.ValueEncodings(vals)
	if err != nil {
		return false // a placeholder cannot hold its value, or too many ways
	}
	pinned := false
	EachCombination(encs, func(pick []int) bool {
		// The pinned placeholders become literal text.
		q := &Pattern{phs: p.phs, segs: make([]segment, 0, len(p.segs))}
		for _, s := range p.segs {
			if s.ph >= 0 && encs[s.ph] != nil {
				s = segment{lit: encs[s.ph][pick[s.ph]], ph: -1}
			}
			q.segs = append(q.segs, s)
		}
		_, pinned = q.split(key)
		return !pinned
	})
	return pinned
}
