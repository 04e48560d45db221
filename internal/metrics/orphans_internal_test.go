package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
)

// keydeck_orphaned_reservations is a count only where every reservation
// was checked against every concurrency set: with the sets sensitive (never
// looked in) or not all known, it is absent — a 0 there silenced the
// orphaned-reservations alert.
func TestOrphanCountOnlyWhenEveryReservationWasChecked(t *testing.T) {
	fam := schema.BuiltinPack("gateway").Family("reservation")
	if fam == nil {
		t.Fatal("no reservation family in the gateway pack")
	}
	checked := quotas.Row{Family: fam}
	checked.SetsKnown, checked.SetsComplete = true, true
	hidden := quotas.Row{Family: fam}
	hidden.SetsKnown, hidden.SetsSensitive = true, true
	partial := quotas.Row{Family: fam}
	partial.SetsKnown = true
	for _, tc := range []struct {
		name string
		rows []quotas.Row
		want bool
	}{
		{"every row checked", []quotas.Row{checked, checked}, true},
		{"no reservation at all", nil, true},
		{"sets sensitive", []quotas.Row{checked, hidden}, false},
		{"sets not all known", []quotas.Row{partial}, false},
	} {
		snap := quotas.Snapshot{Conn: "gw", Started: true, Pass: 1, Families: []quotas.FamilyRows{{DB: 0, Family: fam, Rows: tc.rows}}}
		if got := hasSeries(t, func(e emitter) { collectQuotas(e, []quotas.Snapshot{snap}) }, "keydeck_orphaned_reservations"); got != tc.want {
			t.Errorf("%s: series present %v, want %v", tc.name, got, tc.want)
		}
	}
}

func hasSeries(t *testing.T, collect func(emitter), name string) bool {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	collect(emitter{ch})
	close(ch)
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(m.Desc().String(), `"`+name+`"`) {
			return true
		}
	}
	return false
}
