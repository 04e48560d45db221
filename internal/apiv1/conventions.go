// Package apiv1 is the contract of Keydeck's JSON API (/api/v1) and of the
// pages' Accept: application/json answers: typed, documented, one JSON for
// both. Its types know nothing of HTTP handlers, templ or go-redis; the
// OpenAPI document is produced from them.
//
// Conventions, one for the whole API:
//   - field names are snake_case;
//   - numbers are JSON numbers, never display strings;
//   - durations are integer milliseconds in fields named …_ms (a TTL of
//     −1 means none);
//   - times are RFC 3339 in UTC;
//   - sizes are integer bytes;
//   - a Redis name (key, member, field, argument) is a Name: a JSON string
//     when its bytes are valid UTF-8, else {"b64": "<standard base64>"};
//   - lists are {"items": […], "next": CURSOR|null};
//   - errors are RFC 9457 application/problem+json, with the pages'
//     statuses; 401 and 403 are JSON too, never a redirect;
//   - nothing of a sensitive family, ever.
package apiv1

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// Name is a Redis name carried byte for byte: encoding/json would replace
// invalid UTF-8 with U+FFFD and turn two keys into one. Valid UTF-8 is a
// plain JSON string; anything else is {"b64": "<standard base64>"}, which
// no JSON string can be mistaken for. Input accepts both forms.
type Name string

type nameB64 struct {
	B64 string `json:"b64"`
}

// MarshalJSON writes n as a string or as {"b64": …}.
func (n Name) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(n)) {
		return json.Marshal(string(n))
	}
	return json.Marshal(nameB64{base64.StdEncoding.EncodeToString([]byte(n))})
}

// UnmarshalJSON reads a string or {"b64": …}.
func (n *Name) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var e nameB64
		if err := json.Unmarshal(b, &e); err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(e.B64)
		if err != nil {
			return errors.New("apiv1: b64 is not standard base64")
		}
		*n = Name(raw)
		return nil
	}
	return json.Unmarshal(b, (*string)(n))
}

// Schema describes Name in the OpenAPI document: a string, or an object
// with the bytes in standard base64.
func (Name) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{
		Description: "A Redis name, byte for byte: a string when its bytes are valid UTF-8, else {\"b64\": standard base64 of its bytes}.",
		OneOf: []*huma.Schema{
			{Type: huma.TypeString},
			{
				Type:                 huma.TypeObject,
				Required:             []string{"b64"},
				AdditionalProperties: false,
				Properties: map[string]*huma.Schema{
					"b64": {Type: huma.TypeString, ContentEncoding: "base64"},
				},
			},
		},
	}
}

// List is one page of a list: items, and the cursor of the next page
// (null on the last).
type List[T any] struct {
	Items []T     `json:"items" nullable:"false" doc:"This page's items."`
	Next  *string `json:"next" doc:"Cursor of the next page; null on the last."`
}

// Millis is d in whole milliseconds, for a …_ms field; a negative d (no
// expiry) is −1.
func Millis(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Milliseconds()
}

// Time is t in UTC, for an RFC 3339 field; the zero time stays zero (the
// field should then be omitted or a pointer).
func Time(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
