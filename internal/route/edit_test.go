package route

import (
	"errors"
	"net/url"
	"testing"
)

// A choice (select, checkbox) is taken as sent whatever the arguments'
// encoding; a textarea's CRLF comes back as the LF typed; a name is
// decoded byte-exact and never trimmed.
func TestParseActionChoicesAndTextareas(t *testing.T) {
	a, err := ParseAction(url.Values{"kind": {"rename-key"}, "db": {"0"}, "enc": {ArgsBase64},
		"arg.target": {"dHdpbiA="}, "choice.replace": {"true"}, "arg.value": {"YQ0KYg=="}, "lf": {"value"}})
	if err != nil {
		t.Fatal(err)
	}
	// The value was sent in base64: its CR LF are bytes, not a textarea's.
	if a.Args["target"] != "twin " || a.Args["replace"] != "true" || a.Args["value"] != "a\r\nb" {
		t.Fatalf("args %q", a.Args)
	}
	a, err = ParseAction(url.Values{"db": {"0"}, "arg.value": {"a\r\nb\r\n"}, "lf": {"value"}, "arg.other": {"c\r\n"}})
	if err != nil || a.Args["value"] != "a\nb\n" || a.Args["other"] != "c\r\n" {
		t.Fatalf("args %q, %v", a.Args, err)
	}
	if _, err := ParseAction(url.Values{"db": {"0"}, "arg.replace": {""}, "choice.replace": {"true"}}); !errors.Is(err, ErrParam) {
		t.Fatalf("an argument given as text and as a choice: %v", err)
	}
}

func TestParseCreate(t *testing.T) {
	cf, err := ParseCreate(url.Values{"name": {`k\xff `}, "name_enc": {ArgsEscaped}, "arg.type": {"hash"}, "arg.value": {"{}\r\n"}, "lf": {"value"}})
	if err != nil || cf.Name != "k\xff " || cf.Args["type"] != "hash" || cf.Args["value"] != "{}\n" {
		t.Fatalf("%q %v", cf, err)
	}
	for _, bad := range []url.Values{{"name": {""}}, {"name": {"!"}, "name_enc": {ArgsBase64}}, {"name": {"k"}, "arg.type": {"a", "b"}}} {
		if _, err := ParseCreate(bad); !errors.Is(err, ErrParam) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
