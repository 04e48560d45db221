package action

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/keydeck/keydeck/views/format"
)

// The single-key edits (create-key, set-string, set-hash-field,
// set-list-element, push-list, add-set-member, add-zset-member,
// add-stream-entry, rename-key, persist) are kinds like any other: the
// Runner records the prior state and undo writes it back. Those acting on
// one hash field or one set or sorted-set member are MemberPlans, so a key
// of any size can be edited and undo puts back that part only; the others
// act on the whole key, whose prior DUMP is bounded as for any action.
//
// Values are data: every argument carrying one is Arg.Data, so the audit
// record withholds it when the key is sensitive, and a sensitive key's
// changes are worded with sizes only (valueWords).

// MaxEditBytes bounds a value an edit writes: it is carried in the
// audit record's arguments (for a key that is not sensitive).
const MaxEditBytes = 1 << 20

// Encodings of ArgValue (ArgEncoding).
const (
	EncodingText = "text"
	EncodingHex  = "hex"
)

// valueArgs are the arguments of a kind that writes one value.
func valueArgs(help string) []Arg {
	return []Arg{
		{Name: ArgValue, Help: help, Data: true, Input: InputTextarea},
		{Name: ArgEncoding, Help: "the value is written as text, or as hex digits (binary: 00ff…)", Input: InputSelect, Choices: []string{EncodingText, EncodingHex}, Optional: true},
	}
}

// decodeValue reads the value argument in its encoding, byte-exact: text
// is taken as sent (never trimmed), hex may be spaced ("00 ff").
func decodeValue(req Request, required bool) (string, error) {
	v, ok := req.Args[ArgValue]
	if !ok && required {
		return "", invalidf("value is required")
	}
	switch enc := req.Args[ArgEncoding]; enc {
	case "", EncodingText:
	case EncodingHex:
		clean := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
				return -1
			}
			return r
		}, v)
		b, err := hex.DecodeString(clean)
		if err != nil {
			// Not the decoder's words: they quote the byte, which may be
			// a sensitive key's data.
			return "", invalidf("value is not hex digits (two per byte, such as 00ff1a; spaces and line breaks are skipped)")
		}
		v = string(b)
	default:
		return "", invalidf("encoding %q: want text or hex", enc)
	}
	if len(v) > MaxEditBytes {
		return "", invalidf("value of %s is longer than the %s an edit may write", format.Bytes(int64(len(v))), format.Bytes(MaxEditBytes))
	}
	return v, nil
}

// valueWords describes a value in a change: its size, and for a key that
// is not sensitive its start, quoted ("12 bytes: \"hello\"").
func valueWords(s State, v string) string {
	if s.Sensitive {
		return fmt.Sprintf("a value of %d bytes (sensitive, not shown)", len(v))
	}
	return fmt.Sprintf("%d bytes: %q", len(v), clipText(v, 60))
}

// partWords names a member or field in a change: quoted, or withheld on a
// sensitive key, whose members are data.
func partWords(s State, noun, name string) string {
	if s.Sensitive {
		return "a " + noun + " (sensitive, not shown)"
	}
	return noun + " " + quoteKey(name)
}

// wantType refuses a key of another type than typ (absent is refused only
// when mustExist).
func wantType(s State, typ string, mustExist bool) error {
	switch {
	case !s.Exists() && mustExist:
		return fmt.Errorf("%w: key %s does not exist", ErrNotFound, quoteKey(s.Key))
	case s.Exists() && s.Type != typ:
		return invalidf("key %s is a %s, not a %s", quoteKey(s.Key), s.Type, typ)
	}
	return nil
}

// flag reads a checkbox argument: absent, "", "false", "no", "off" are
// false; "true", "on", "yes", "1" true.
func flag(req Request, name string) (bool, error) {
	switch v := strings.ToLower(req.Args[name]); v {
	case "", "false", "no", "off", "0":
		return false, nil
	case "true", "on", "yes", "1":
		return true, nil
	default:
		return false, invalidf("%s %q: want true or false", name, v)
	}
}
