package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// ViolationsPage mirrors the Violations page (handlers/violations.go):
// the keys of every database of a connection that break their family's
// rules, as each database's statistics sweep found them. It carries key
// names, families and problems, never a value. Meant for
// GET /api/v1/connections/{conn}/violations.
type ViolationsPage struct {
	Conn  string     `json:"conn" doc:"The connection's name." example:"eisland"`
	Redis RedisState `json:"redis" doc:"Whether the server answers; when down the databases are what the sweeps last found."`
	Pack  PackState  `json:"pack" doc:"The schema pack whose rules the keys are checked against; without one no key can break one (databases is empty)."`
	// Complete: total is exact.
	Complete  bool               `json:"complete" doc:"Every database holding keys was swept at least once and the keyspace was read: total is every violation. False: total is a lower bound, the sweeps run on."`
	Total     int64              `json:"total" minimum:"0" doc:"Violations counted by the databases' completed passes (figures exact); a database still in its first pass has only an estimate, in its own count, and is not in total. So at least this many, and every one when complete."`
	TotalEst  bool               `json:"total_estimated" doc:"total includes counts estimated from samples (some family's type violations found in the keys read whole and scaled to its count)."`
	Databases List[ViolationsDB] `json:"databases" doc:"Each database holding keys, by index (when Redis is down: those the sweeps had read). One page: next is null."`
	Error     string             `json:"error,omitempty" doc:"Why the keyspace (which databases hold keys) could not be read; absent when it was."`
}

// ViolationsDB is one database's violations.
type ViolationsDB struct {
	DB int `json:"db" minimum:"0" doc:"The database." example:"4"`
	// Figures as the database statistics say them.
	Figures     string       `json:"figures" enum:"exact,estimated,not_known" doc:"exact: from a completed pass (completed_at); estimated: scaled from a partial first pass (coverage); not_known: its first pass has read nothing yet (violations.count is absent)."`
	CompletedAt *time.Time   `json:"completed_at,omitempty" doc:"When the pass counted completed; absent before one did."`
	Coverage    *float64     `json:"coverage,omitempty" minimum:"0" maximum:"1" doc:"Share of the keys the partial first pass has read; only while estimated."`
	Violations  DBViolations `json:"violations" doc:"The count and up to 100 of the keys; get-db-stats has the database's other figures."`
	Error       string       `json:"error,omitempty" doc:"Why the sweep cannot read this database; absent when it can."`
}

// Violations maps the databases' statistics (stats.Sweeper.Detail of
// each database holding keys) with the connection's pack choice and
// status; readErr is why the keyspace could not be read.
func Violations(conn string, details []stats.DBDetail, pc redisview.PackChoice, st redisview.Status, readErr string) ViolationsPage {
	p := ViolationsPage{Conn: conn, Redis: redisState(st), Pack: packState(pc), Databases: list[ViolationsDB](nil), Error: readErr}
	if pc.Pack == nil {
		return p
	}
	swept := 0
	for _, d := range details {
		v := ViolationsDB{DB: d.DB, CompletedAt: timePtr(d.CompletedAt), Error: d.Err}
		switch {
		case !d.CompletedAt.IsZero():
			v.Figures = "exact"
			swept++
		case d.Estimated:
			v.Figures, v.Coverage = "estimated", ptr(d.Coverage)
		default:
			v.Figures = "not_known"
		}
		v.Violations = DBViolations{Count: optional(d.ViolCount, v.Figures != "not_known"), Estimated: v.Figures != "not_known" && (d.Estimated || sampledViolations(d)),
			Items: make([]DBViolation, 0, len(d.Violations))}
		for _, x := range d.Violations {
			v.Violations.Items = append(v.Violations.Items, DBViolation{Key: Name(x.Key), Family: x.Family, Problem: x.Problem})
		}
		if v.Figures == "exact" { // an estimate may overshoot: total stays a floor
			p.Total += d.ViolCount
			p.TotalEst = p.TotalEst || v.Violations.Estimated
		}
		p.Databases.Items = append(p.Databases.Items, v)
	}
	down := !st.Up && !st.Checked.IsZero()
	p.Complete = swept == len(details) && readErr == "" && !down
	return p
}

// sampledViolations: some family's violations are scaled from its sample.
func sampledViolations(d stats.DBDetail) bool {
	for _, f := range d.Families {
		if f.ViolationsEstimated && f.Violations > 0 {
			return true
		}
	}
	return false
}
