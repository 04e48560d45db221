package handlers

import (
	"encoding/json"
	"testing"
)

// The last line of an export cut short is JSON whatever the error says
// (Go's %q wrote \x00 and \a, which JSON readers refuse).
func TestExportCutShortLineIsJSON(t *testing.T) {
	line := cutShortLine("read tcp: \x00\a bell \xff \u2028 \"quoted\"")
	var v map[string]string
	if err := json.Unmarshal(line, &v); err != nil || v["error"] == "" || line[len(line)-1] != '\n' {
		t.Errorf("%q: %v %v", line, v, err)
	}
}
