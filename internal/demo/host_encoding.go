package demo

import (
	"strconv"

	"github.com/alicebob/miniredis/v2/server"
)

// Redis's default thresholds for its compact encodings (redis.conf of
// Redis 7.2+ and 8, the versions the demo follows).
const (
	maxHashEntries     = 512  // hash-max-listpack-entries
	maxListpackEntries = 128  // set-, zset-max-listpack-entries
	maxListpackValue   = 64   // hash-, set-, zset-max-listpack-value
	maxIntsetEntries   = 512  // set-max-intset-entries
	maxListBytes       = 8192 // list-max-listpack-size -2
	maxEmbstr          = 44   // OBJ_ENCODING_EMBSTR_SIZE_LIMIT
)

// objectEncoding answers OBJECT ENCODING key, which miniredis lacks, with
// what Redis answers for a value of the same shape written the way the
// applications write it (SET, HSET, RPUSH …): the compact encoding while
// the value fits its thresholds, the general one beyond. (Redis never
// converts back when a value shrinks; the demo answers by the shape now.)
func (h *host) objectEncoding(c *server.Peer, db int, key string) {
	d := h.m.DB(db)
	if !d.Exists(key) {
		c.WriteNull()
		return
	}
	c.WriteBulk(encodingOf(d.Type(key), func() []string {
		switch d.Type(key) {
		case "string":
			v, _ := d.Get(key)
			return []string{v}
		case "hash":
			fs, _ := d.HKeys(key)
			out := make([]string, 0, 2*len(fs))
			for _, f := range fs {
				out = append(out, f, d.HGet(key, f))
			}
			return out
		case "list":
			l, _ := d.List(key)
			return l
		case "set":
			m, _ := d.Members(key)
			return m
		case "zset":
			z, _ := d.SortedSet(key)
			out := make([]string, 0, len(z))
			for m := range z {
				out = append(out, m)
			}
			return out
		}
		return nil
	}))
}

// encodingOf is the encoding Redis gives a value of type typ holding
// parts (a string's value; a hash's fields and values; members; elements).
func encodingOf(typ string, parts func() []string) string {
	switch typ {
	case "stream":
		return "stream"
	case "string":
		v := parts()[0]
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
			return "int"
		}
		if len(v) <= maxEmbstr {
			return "embstr"
		}
		return "raw"
	case "list":
		size := 6 // a listpack's header and end byte
		for _, e := range parts() {
			size += len(e) + 2
		}
		if size <= maxListBytes {
			return "listpack"
		}
		return "quicklist"
	}
	ps := parts()
	entries := len(ps)
	if typ == "hash" {
		entries /= 2
	}
	if typ == "set" && entries <= maxIntsetEntries {
		ints := true
		for _, m := range ps {
			if n, err := strconv.ParseInt(m, 10, 64); err != nil || strconv.FormatInt(n, 10) != m {
				ints = false
				break
			}
		}
		if ints {
			return "intset"
		}
	}
	small := entries <= maxListpackEntries || (typ == "hash" && entries <= maxHashEntries)
	for _, p := range ps {
		small = small && len(p) <= maxListpackValue
	}
	switch {
	case small:
		return "listpack"
	case typ == "zset":
		return "skiplist"
	}
	return "hashtable"
}
