package action

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// RDB object types whose DUMP lists elements in hash-bucket order.
const (
	rdbSet  = 2
	rdbHash = 4
)

// contentDigest hashes a DUMP payload so that equal values give equal
// digests. For most types the payload is already canonical. A
// hashtable-encoded set or hash is serialized in bucket order, which
// changes when the dict rehashes — and value dicts rehash a step at a time
// on ordinary reads — so the same value could DUMP differently a moment
// later, making a confirmation or an undo refuse forever. Their elements
// are hashed sorted instead. Element encodings are compared as stored
// (int-encoded or LZF-compressed), which is deterministic for one server
// configuration. A payload this parser does not follow falls back to its
// raw bytes: that can only make Keydeck refuse, never act on a changed key.
func contentDigest(dump []byte) []byte {
	if len(dump) > 10 && (dump[0] == rdbSet || dump[0] == rdbHash) {
		if d, ok := sortedDigest(dump[:len(dump)-10]); ok {
			return d
		}
	}
	h := sha256.Sum256(dump)
	return h[:]
}

func sortedDigest(body []byte) ([]byte, bool) {
	rd := rdbReader{b: body[1:]}
	n, special, ok := rd.length()
	if !ok || special || n > uint64(len(body)) {
		return nil, false
	}
	per := 1
	if body[0] == rdbHash {
		per = 2
	}
	elems := make([][]byte, 0, n)
	for range n {
		start := rd.off
		for range per {
			if !rd.skipString() {
				return nil, false
			}
		}
		elems = append(elems, rd.b[start:rd.off])
	}
	if rd.off != len(rd.b) {
		return nil, false
	}
	slices.SortFunc(elems, bytes.Compare)
	h := sha256.New()
	h.Write([]byte{body[0]})
	var l [8]byte
	for _, e := range elems {
		// Length-prefixed, so element boundaries cannot be forged by content.
		binary.BigEndian.PutUint64(l[:], uint64(len(e)))
		h.Write(l[:])
		h.Write(e)
	}
	return h.Sum(nil), true
}

type rdbReader struct {
	b   []byte
	off int
}

func (r *rdbReader) take(n uint64) ([]byte, bool) {
	if n > uint64(len(r.b)-r.off) {
		return nil, false
	}
	out := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return out, true
}

// length reads an RDB length; special reports the 11xxxxxx string
// encodings, whose low six bits it returns as n.
func (r *rdbReader) length() (n uint64, special, ok bool) {
	b, ok := r.take(1)
	if !ok {
		return 0, false, false
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), false, true
	case 1:
		c, ok := r.take(1)
		return uint64(b[0]&0x3f)<<8 | uint64(c[0]), false, ok
	case 2:
		switch b[0] {
		case 0x80:
			c, ok := r.take(4)
			if !ok {
				return 0, false, false
			}
			return uint64(binary.BigEndian.Uint32(c)), false, true
		case 0x81:
			c, ok := r.take(8)
			if !ok {
				return 0, false, false
			}
			return binary.BigEndian.Uint64(c), false, true
		}
		return 0, false, false
	}
	return uint64(b[0] & 0x3f), true, true
}

func (r *rdbReader) skipString() bool {
	n, special, ok := r.length()
	if !ok {
		return false
	}
	if !special {
		_, ok = r.take(n)
		return ok
	}
	switch n {
	case 0, 1, 2: // int8, int16, int32
		_, ok = r.take(1 << n)
		return ok
	case 3: // LZF: compressed length, uncompressed length, data
		clen, sp, ok := r.length()
		if !ok || sp {
			return false
		}
		if _, sp, ok := r.length(); !ok || sp {
			return false
		}
		_, ok = r.take(clen)
		return ok
	}
	return false
}
