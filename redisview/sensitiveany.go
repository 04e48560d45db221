package redisview

import "strings"

// SensitiveAnywhere reports whether name, taken as a key name in any
// database of the connection's pack, is a key of a sensitive family, and
// names that family. Server-wide records (the slowlog) carry key names
// without their database, so a name counts as sensitive if it would be in
// one database or another. Until the connection's pack is chosen every
// name counts as sensitive (as Sensitive says), with fam "".
func (c *Conn) SensitiveAnywhere(name string) (fam string, sensitive bool) {
	c.mu.Lock()
	ch, pending := c.pack, len(c.packs) > 0 || c.detectCtx != nil
	c.mu.Unlock()
	if ch.Pack == nil {
		return "", pending && !ch.Sampled
	}
	cls := ch.Pack.Classifier()
	// -1 is every database no family names.
	dbs := []int{-1}
	for _, f := range ch.Pack.Families {
		dbs = append(dbs, f.DBs...)
	}
	for _, db := range dbs {
		if f, ok := cls.Classify(db, name); ok && f.Sensitive {
			return f.ID, true
		}
	}
	return "", false
}

// SensitivePrefix reports whether a key name that begins with prefix (the
// rest of it unknown: the server cut it short) may be a key of a
// sensitive family: one whose pattern's literal beginning agrees with
// prefix. Until the pack is chosen every name may be (fam "").
func (c *Conn) SensitivePrefix(prefix string) (fam string, sensitive bool) {
	c.mu.Lock()
	ch, pending := c.pack, len(c.packs) > 0 || c.detectCtx != nil
	c.mu.Unlock()
	if ch.Pack == nil {
		return "", pending && !ch.Sampled
	}
	for _, f := range ch.Pack.Families {
		lit := f.Pattern.LiteralPrefix()
		if f.Sensitive && (strings.HasPrefix(prefix, lit) || strings.HasPrefix(lit, prefix)) {
			return f.ID, true
		}
	}
	return "", false
}
