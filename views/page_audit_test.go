package views

import (
	"strings"
	"testing"
)

// An intent record shows what it recorded of each key; an outcome record
// holds fingerprints only and shows nothing of the kind.
func TestAuditRowsShowRecordedPriorState(t *testing.T) {
	vm := AuditVM{Rows: []AuditRow{
		{ID: "2-0", Phase: "outcome", Outcome: "ok", Action: "delete-key", Keys: []string{"a"}},
		{ID: "1-0", Phase: "intent", Action: "delete-key", Keys: []string{"mg:score:user-meta:2048:李雷", "bad\xff", "totp:security:secret:plain:ann"}, Targets: []AuditTarget{
			{Key: "mg:score:user-meta:2048:李雷", Prior: `hash of 2 fields: "moves"="300", "score"="4096"`, TTL: "TTL 1h"},
			{Key: "bad\xff", Part: "m\xfe<b>", Prior: "score 1,200 <script>alert(1)</script> \xff", TTL: "no TTL"},
			{Key: "totp:security:secret:plain:ann", Prior: "sensitive: not recorded"},
		}},
	}}
	d := render(t, AuditLive(vm, true))
	rows := d.Find(`[data-testid="audit-row"]`)
	if rows.Length() != 2 {
		t.Fatalf("%d rows", rows.Length())
	}
	if rows.First().Find(`[data-testid="audit-prior"]`).Length() != 0 {
		t.Error("an outcome record shows a prior state")
	}
	targets := rows.Last().Find(`[data-testid="audit-target"]`)
	if targets.Length() != 3 {
		t.Fatalf("%d targets, want 3", targets.Length())
	}
	want := []struct{ key, part, prior, line string }{
		{"mg:score:user-meta:2048:李雷", "", `hash of 2 fields: "moves"="300", "score"="4096"`, "· TTL 1h"},
		{`bad\xff`, `m\xfe<b>`, `score 1,200 <script>alert(1)</script> \xff`, "· no TTL"},
		{"totp:security:secret:plain:ann", "", "sensitive: not recorded", ""},
	}
	for i, w := range want {
		tg := targets.Eq(i)
		if got := strings.TrimSpace(tg.Find(`[data-testid="audit-target-key"]`).Text()); got != w.key {
			t.Errorf("target %d key %q, want %q", i, got, w.key)
		}
		if got := strings.TrimSpace(tg.Find(`[data-testid="audit-target-part"]`).Text()); got != w.part {
			t.Errorf("target %d part %q, want %q", i, got, w.part)
		}
		if got := tg.Find(`[data-testid="audit-target-prior"]`).Text(); got != w.prior {
			t.Errorf("target %d prior %q, want %q", i, got, w.prior)
		}
		if got := tg.Text(); !strings.Contains(got, w.line) {
			t.Errorf("target %d reads %q, want it to contain %q", i, got, w.line)
		}
	}
	if d.Find(`[data-testid="audit-target"] script, [data-testid="audit-target"] b`).Length() != 0 {
		t.Error("markup recorded in a value became elements")
	}
}
