package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/bulk"
)

// A count of no key offers nothing to confirm; a count says the keys
// whose memory is unknown, and what the preview takes in the audit Redis.
func TestBulkLiveSaysNothingToDoAndUnknowns(t *testing.T) {
	t.Parallel()
	o := bulk.Options{Rate: 2000, Batch: 100, PreviewTTL: time.Hour}
	empty := bulk.Job{ID: "20260101T000000-abcdefabcd", Status: bulk.Counted, Undoable: true, Spec: bulk.Spec{Kind: bulk.KindDelete}}
	vm := bulkJobVM(empty, o)
	bulkControls(&vm, empty)
	if vm.StartURL != "" || !strings.Contains(vm.Live.StatusText, "nothing to do") {
		t.Fatalf("an empty count: %+v", vm)
	}
	j := empty
	j.Count, j.Memory, j.MemoryUnknown, j.ItemBytes = 10, 4096, 3, 800
	vm = bulkJobVM(j, o)
	bulkControls(&vm, j)
	if vm.StartURL == "" || !strings.Contains(vm.Live.Memory, "memory unknown for 3 keys") || !strings.Contains(vm.Live.Memory, "Memory: 4.0 KiB") ||
		!strings.Contains(vm.Live.Storage, "about 80 bytes a key") || !strings.Contains(vm.Live.Storage, "1h") {
		t.Fatalf("a count: %+v", vm.Live)
	}
	j.Memory = 0
	if m := bulkLiveVM(j, o, "counted").Memory; m != "memory unknown for 3 keys (MEMORY USAGE refused or failed)" {
		t.Fatalf("memory of none known: %q", m)
	}
}
