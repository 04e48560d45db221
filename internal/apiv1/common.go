package apiv1

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// This file holds the pieces the views' types share: a family named in a
// database, a key's placeholder values, the state of the connection and
// of its pack, and how an error is worded.

// FamilyRef names one schema family in one database: the group a row
// belongs to.
type FamilyRef struct {
	ID     string `json:"id" doc:"The family's id in its schema pack." example:"slider-create-account"`
	Domain string `json:"domain" doc:"The family's domain (a part of the application)." example:"verify"`
	Role   string `json:"role" doc:"The family's role (what its keys mean)." example:"token-bucket"`
	DB     int    `json:"db" minimum:"0" doc:"The database the family's keys live in." example:"3"`
}

func familyRef(f *schema.Family, db int) FamilyRef {
	return FamilyRef{ID: f.ID, Domain: f.Domain, Role: string(f.Role), DB: db}
}

// Placeholder is one placeholder of a key's pattern and its value in the
// key: who or what the key is about.
type Placeholder struct {
	Name  string `json:"name" doc:"The placeholder's name in the pattern." example:"account"`
	Value Name   `json:"value" doc:"Its value, decoded where the pattern says it is base64."`
	Raw   Name   `json:"raw" doc:"Its bytes as they appear in the key."`
}

// placeholders maps a key's placeholder values; never nil, so an empty
// list is [] in JSON.
func placeholders(vars []schema.Var) []Placeholder {
	out := make([]Placeholder, 0, len(vars))
	for _, v := range vars {
		out = append(out, Placeholder{Name: v.Name, Value: Name(v.Value), Raw: Name(v.Raw)})
	}
	return out
}

// Redis states of a connection.
const (
	RedisUp         = "up"
	RedisDown       = "down"
	RedisConnecting = "connecting"
)

// RedisState is whether the connection's server answered its last probe.
// "down" means the figures beside it are as last read (or not read).
type RedisState struct {
	State string     `json:"state" enum:"connecting,up,down" doc:"connecting: not probed yet; up: the last probe answered; down: it failed (figures are as last read)."`
	Since *time.Time `json:"since,omitempty" doc:"When the current state began; absent while connecting."`
	Error string     `json:"error,omitempty" doc:"Why the last probe failed; absent unless down."`
}

// redisState maps a connection's status.
func redisState(st redisview.Status) RedisState {
	switch {
	case st.Checked.IsZero():
		return RedisState{State: RedisConnecting}
	case st.Up:
		return RedisState{State: RedisUp, Since: timePtr(st.Since)}
	}
	return RedisState{State: RedisDown, Since: timePtr(st.Since), Error: st.Err}
}

// Pack states of a connection.
const (
	PackMatching = "matching"
	PackNone     = "none"
	PackMatched  = "matched"
)

// PackState is the schema pack that explains a connection's keys.
type PackState struct {
	State string `json:"state" enum:"matching,none,matched" doc:"matching: not known yet (the server is being sampled); none: no pack explains the keys; matched: Name does."`
	Name  string `json:"name,omitempty" doc:"The pack's name; absent unless matched." example:"eisland"`
	Why   string `json:"why,omitempty" doc:"How the choice was made, or why none fits; absent while matching."`
}

// packState maps a connection's pack choice.
func packState(pc redisview.PackChoice) PackState {
	switch {
	case pc.Pack != nil:
		return PackState{State: PackMatched, Name: pc.Pack.Name, Why: pc.Why}
	case pc.Why == "":
		return PackState{State: PackMatching}
	}
	return PackState{State: PackNone, Why: pc.Why}
}

// ErrText words an error for a client: the connection's SafeErr, which
// hides the credentials an error may echo. Nil words it as err.Error().
type ErrText func(error) string

func (f ErrText) text(err error) string {
	switch {
	case err == nil:
		return ""
	case f == nil:
		return err.Error()
	}
	return f(err)
}

// timePtr is t in UTC, or nil for the zero time (an omitted field).
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := Time(t)
	return &u
}

// msPtr is d in ms, or nil when known is false (an omitted field).
func msPtr(d time.Duration, known bool) *int64 {
	if !known {
		return nil
	}
	ms := Millis(d)
	return &ms
}

// names maps byte strings to Names; never nil.
func names(ss []string) []Name {
	out := make([]Name, 0, len(ss))
	for _, s := range ss {
		out = append(out, Name(s))
	}
	return out
}

// list is a List of items with no next page; never a null items.
func list[T any](items []T) List[T] {
	if items == nil {
		items = []T{}
	}
	return List[T]{Items: items}
}

// Decimal is a number as Redis holds it (a balance, an amount), sent as a
// JSON number with its digits unchanged: a float64 would round 0.1 + 0.2
// and cents past 2^53.
type Decimal string

// MarshalJSON writes the digits as a JSON number.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if !isJSONNumber(string(d)) {
		return nil, errors.New("apiv1: " + strconv.Quote(string(d)) + " is not a JSON number")
	}
	return []byte(d), nil
}

// UnmarshalJSON reads a JSON number's digits.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if !isJSONNumber(s) {
		return errors.New("apiv1: a decimal must be a JSON number")
	}
	*d = Decimal(s)
	return nil
}

// Schema describes Decimal in the OpenAPI document: a number.
func (Decimal) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeNumber, Description: "A number exactly as Redis holds it (its digits unchanged)."}
}

// decimal is s as a Decimal, or nil when s is not a JSON number ("Inf",
// "+5", "0x10" parse as floats but are no JSON number).
func decimal(s string) *Decimal {
	if !isJSONNumber(s) {
		return nil
	}
	d := Decimal(s)
	return &d
}

func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}
