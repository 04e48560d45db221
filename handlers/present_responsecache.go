package handlers

import (
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleResponseCache] = presentResponseCache
}

// presentResponseCache shows a decode.ResponseCache.
func presentResponseCache(d *panel, state any) {
	rc := state.(*decode.ResponseCache)
	what := "text body"
	if rc.Content == "json" {
		what = "JSON body"
	}
	d.row("Body", format.Bytes(rc.Bytes))
	switch {
	case rc.Content != "json":
	case !rc.Checked:
		d.row("JSON", "not checked: longer than "+format.Bytes(decode.MaxCheckedBody))
	case rc.Valid:
		d.row("JSON", "valid")
	default:
		d.row("JSON", "does not parse")
		what = "broken JSON body"
		d.vm.Alert = "The body does not parse as JSON: the gateway serves it as a cached response until it expires."
	}
	if rc.TTL < 0 {
		d.vm.Summary = format.Bytes(rc.Bytes) + " " + what + ", no TTL"
		d.row("TTL left", "none")
		d.vm.Alert = joinAlert(d.vm.Alert, "No TTL: a cached response lives for its route's TTL; this one is served until it is evicted.")
		return
	}
	d.vm.Summary = format.Bytes(rc.Bytes) + " " + what + ", " + format.Duration(rc.TTL) + " left"
	d.row("TTL left", format.TTL(rc.TTL))
	d.row("Served until", format.Time(d.now.Add(rc.TTL)))
}

func joinAlert(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}
