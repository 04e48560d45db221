package bulk

import (
	"encoding/binary"
	"errors"
)

// The items, priors and in-flight records are stored as length-prefixed
// byte fields: key names and payloads are bytes, carried exactly.

var errCorrupt = errors.New("bulk: a stored record is malformed")

func appendField(b, f []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(f)))
	return append(b, f...)
}

func readField(b []byte) (field, rest []byte, err error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, nil, errCorrupt
	}
	return b[w : w+int(n)], b[w+int(n):], nil
}

func readFields(b []byte, n int) ([][]byte, error) {
	out := make([][]byte, n)
	for i := range out {
		f, rest, err := readField(b)
		if err != nil {
			return nil, err
		}
		out[i], b = f, rest
	}
	if len(b) != 0 {
		return nil, errCorrupt
	}
	return out, nil
}

func encodeItem(it Item) string {
	b := appendField(nil, []byte(it.Key))
	b = appendField(b, []byte(it.Print))
	return string(appendField(b, it.Payload))
}

func decodeItem(s string) (Item, error) {
	f, err := readFields([]byte(s), 3)
	if err != nil {
		return Item{}, err
	}
	it := Item{Key: string(f[0]), Print: string(f[1])}
	if len(f[2]) > 0 {
		it.Payload = f[2]
	}
	return it, nil
}

func encodeState(s State) []byte {
	b := appendField(nil, []byte(s.Type))
	b = binary.AppendVarint(b, s.ExpireAt)
	return appendField(b, s.Dump)
}

func decodeState(b []byte) (State, error) {
	t, rest, err := readField(b)
	if err != nil {
		return State{}, err
	}
	exp, w := binary.Varint(rest)
	if w <= 0 {
		return State{}, errCorrupt
	}
	d, rest, err := readField(rest[w:])
	if err != nil || len(rest) != 0 {
		return State{}, errCorrupt
	}
	s := State{Type: string(t), ExpireAt: exp}
	if len(d) > 0 {
		s.Dump = d
	}
	return s, nil
}

// Prior is one key a job acted on: its state before, and the
// fingerprint of the state the job left (what its undo expects).
type Prior struct {
	Key   string
	Prior State
	After string
	// AfterAt is the absolute expiry (ms) the job left, 0 when none or
	// unknown: undo restores a key the job's TTL removed.
	AfterAt int64
}

func encodePrior(p Prior) string {
	b := appendField(nil, []byte(p.Key))
	b = appendField(b, encodeState(p.Prior))
	b = appendField(b, []byte(p.After))
	return string(binary.AppendVarint(b, p.AfterAt))
}

func decodePrior(s string) (Prior, error) {
	b := []byte(s)
	f := make([][]byte, 3)
	for i := range f {
		var err error
		if f[i], b, err = readField(b); err != nil {
			return Prior{}, err
		}
	}
	at, w := binary.Varint(b)
	if w <= 0 || w != len(b) {
		return Prior{}, errCorrupt
	}
	st, err := decodeState(f[1])
	if err != nil {
		return Prior{}, err
	}
	return Prior{Key: string(f[0]), Prior: st, After: string(f[2]), AfterAt: at}, nil
}

// An undo item's payload: the prior state, and the expiry the job left.
func encodeUndo(p Prior) []byte {
	return binary.AppendVarint(appendField(nil, encodeState(p.Prior)), max(p.AfterAt, 0))
}

func decodeUndo(b []byte) (prior State, afterAt int64, err error) {
	f, rest, err := readField(b)
	if err != nil {
		return State{}, 0, err
	}
	at, w := binary.Varint(rest)
	if w <= 0 || w != len(rest) {
		return State{}, 0, errCorrupt
	}
	prior, err = decodeState(f)
	return prior, at, err
}
