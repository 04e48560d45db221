package views

import (
	"strings"
	"testing"
)

// Until something was read, or while the server is unreachable, the
// database page's empty panels say what is not known instead of claiming
// that every key obeys its pack.
func TestDBPageMakesNoClaimsWhenNothingWasRead(t *testing.T) {
	claims := []string{"Every classified key obeys its pack", "None: the pack explains every key seen", "No key of this database matches a family of the pack"}
	known := render(t, DBLive(DBPageVM{Conn: "c", Total: "0"}, true))
	for _, c := range claims {
		if !strings.Contains(known.Text(), c) {
			t.Errorf("after a completed pass of an empty database the page lacks %q", c)
		}
	}
	for name, vm := range map[string]DBPageVM{
		"first sweep": {Conn: "c", Total: "12", Unknown: "Not known yet: the first sweep of this database has not finished."},
		"disconnected": {Conn: "c", Total: "—", Disconnected: "Redis is unreachable — disconnected since 01:02:03.",
			Unknown: "Not known: disconnected since 01:02:03, before a sweep of this database completed."},
	} {
		d := render(t, DBLive(vm, false))
		for _, c := range claims {
			if strings.Contains(d.Text(), c) {
				t.Errorf("%s: the page claims %q", name, c)
			}
		}
		if n := d.Find(`[data-testid="unknown"]`).Length(); n < 4 {
			t.Errorf("%s: %d panels say what is unknown", name, n)
		}
		if got := d.Find(`[data-testid="disconnected"]`).Text(); (vm.Disconnected != "") != strings.Contains(got, "disconnected since") {
			t.Errorf("%s: disconnected banner %q", name, got)
		}
	}
}

// Strings (bytes) and collections (elements) are listed in panels of
// their own.
func TestDBPageRanksStringsApart(t *testing.T) {
	d := render(t, DBLive(DBPageVM{Conn: "c",
		ByElements: []BigKeyRow{{Key: "set", Type: "set", Size: "3 members", Href: "/k?set"}},
		ByLength:   []BigKeyRow{{Key: "long", Type: "string", Size: "5,000 bytes", Href: "/k?long"}},
	}, false))
	if got := d.Find(`[data-testid="by-elements"] [data-testid="big-key"]`).Text(); got != "set" {
		t.Errorf("collections panel lists %q", got)
	}
	if got := d.Find(`[data-testid="by-length"] [data-testid="big-key"]`).Text(); got != "long" {
		t.Errorf("strings panel lists %q", got)
	}
	if !strings.Contains(d.Find(`[data-testid="by-length"]`).Text(), "5,000 bytes") {
		t.Error("string length not in bytes")
	}
}
