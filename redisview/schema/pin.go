package schema

// Pinned reports whether key is a key of the pattern whose named
// placeholders hold exactly the given plain values (encoded as the key
// holds them: base64 placeholders take the encoding Key writes), every
// other placeholder taking some value its class accepts. It settles what
// a glob cannot: "issue-feedback:submit:ops:admin:10.0.0.1" is a key of
// {username}="ops:admin" (and of "ops", with ip "admin:10.0.0.1"), while
// "totp:security:replay:ops:admin2:1:2" is not one of "ops:admin", and
// neither is "totp:security:replay:ops:admin:x:1:2" (the digits classes
// of counter and code leave "ops:admin:x" as the only username).
func (p *Pattern) Pinned(key string, vals map[string]string) bool {
	q := &Pattern{phs: p.phs, segs: make([]segment, 0, len(p.segs))}
	for _, s := range p.segs {
		if s.ph < 0 {
			q.segs = append(q.segs, s)
			continue
		}
		v, ok := vals[p.phs[s.ph].Name]
		if !ok {
			q.segs = append(q.segs, s)
			continue
		}
		ph := p.phs[s.ph]
		lit, err := (&Pattern{segs: []segment{{ph: 0}}, phs: []Placeholder{ph}}).keyFrom([]string{v})
		if err != nil {
			return false // the placeholder cannot hold the value
		}
		q.segs = append(q.segs, segment{lit: lit, ph: -1})
	}
	_, ok := q.split(key)
	return ok
}
