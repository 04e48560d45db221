package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
)

// QuotasPage mirrors the Quotas page (handlers/quotas.go): every quota,
// balance, reservation, concurrency set and breaker hint of a connection,
// most used first, and its single-key configs, as the connection's walk
// holds them. Meant for GET /api/v1/connections/{conn}/quotas.
type QuotasPage struct {
	Conn     string            `json:"conn" doc:"The connection's name." example:"gateway"`
	Redis    RedisState        `json:"redis" doc:"Whether the server answers; when down the rows are as last read (see walk.read_at)."`
	Pack     PackState         `json:"pack" doc:"The schema pack that says which keys are quotas and budgets."`
	Walk     QuotaWalk         `json:"walk" doc:"What the walk has read: before its first step nothing is known, which is not none."`
	Families List[QuotaFamily] `json:"families" doc:"The families with keys, in the walk's order (quotas, concurrency sets, reservations, balances, breaker hints)."`
	Configs  []QuotaRow        `json:"configs" nullable:"false" doc:"The single-key config families (an integer value, such as a routing config version)."`
	Error    string            `json:"error,omitempty" doc:"The walk's last step failed: why; absent when it succeeded."`
}

// Walk states of the Quotas page.
const (
	WalkNotStarted = "not_started"
	WalkFirstPass  = "first_pass"
	WalkWalked     = "walked"
)

// QuotaWalk is the state of the connection's budgeted walk.
type QuotaWalk struct {
	State        string     `json:"state" enum:"not_started,first_pass,walked" doc:"not_started: nothing read (rows are not known); first_pass: the rows are the most used found so far; walked: a pass completed (the rows are its most used, re-read every step)."`
	Passes       int        `json:"passes" minimum:"0" doc:"Completed passes."`
	Seen         int64      `json:"seen" minimum:"0" doc:"Keys the running pass has read."`
	Scans        int64      `json:"scans" minimum:"0" doc:"SCAN calls made since the walk started."`
	CompletedAt  *time.Time `json:"completed_at,omitempty" doc:"When the last pass completed; absent before one did."`
	ReadAt       *time.Time `json:"read_at,omitempty" doc:"When the rows were last read; absent before the first step."`
	TopN         int        `json:"top_n" minimum:"0" doc:"Rows kept per family." example:"20"`
	ScansPerStep int        `json:"scans_per_step" minimum:"0" doc:"SCAN calls per step." example:"10"`
	ScanCount    int        `json:"scan_count" minimum:"0" doc:"SCAN COUNT." example:"200"`
}

// QuotaFamily is one family of budgets in one database.
type QuotaFamily struct {
	FamilyRef
	Pattern  string     `json:"pattern" doc:"The family's key pattern." example:"q:tokens:{keyId}:{yyyyMM:digits6}"`
	Keys     int64      `json:"keys" minimum:"0" doc:"Keys of the family the last complete pass saw (or the running one so far, when more)."`
	Cut      bool       `json:"cut" doc:"The family has more keys than the rows kept: the rows are its most used."`
	Limit    *int64     `json:"limit,omitempty" doc:"Quota or concurrency set: the limit (cap) the pack gives; absent when it is not in Redis (set per subject elsewhere, or a deployment setting)."`
	Unit     string     `json:"unit,omitempty" doc:"Quota, balance, reservation: what is counted."`
	Period   string     `json:"period,omitempty" enum:"day,month" doc:"Quota: its calendar period."`
	MaxTTLMs *int64     `json:"max_ttl_ms,omitempty" doc:"Reservation: the TTL it is written with (it must expire); absent when the pack gives none."`
	Rows     []QuotaRow `json:"rows" nullable:"false" doc:"The most used keys first (reservations: no TTL, then orphaned, then oldest; balances: lowest; breaker hints: open)."`
}

// Levels of a quota row.
const (
	LevelOK   = "ok"
	LevelWarn = "warn"
	LevelFull = "full"
)

// Orphan checks of a reservation.
const (
	OrphanNotChecked = "not_checked"
	OrphanHidden     = "hidden"
	OrphanInFlight   = "in_flight"
	OrphanOrphaned   = "orphaned"
	OrphanYoung      = "young"
	OrphanUnknown    = "unknown"
)

// QuotaRow is one key of a budget family as last read. Fields that do not
// apply to the family's role are absent.
type QuotaRow struct {
	Key       Name          `json:"key"`
	Subject   []Placeholder `json:"subject" nullable:"false" doc:"The key's placeholder values."`
	SubjectID *Name         `json:"subject_id,omitempty" doc:"The API key id the row is about (for the gateway key page); absent when the pack has no API key families or the key names none."`
	ReadAt    time.Time     `json:"read_at" doc:"When the key was last read."`
	TTLMs     *int64        `json:"ttl_ms,omitempty" doc:"Time to live at read_at; -1: none; absent when the key is gone."`
	Gone      bool          `json:"gone" doc:"The key no longer existed at read_at."`
	Hidden    bool          `json:"hidden" doc:"The family is sensitive: only the TTL is read, no value is ever sent."`
	Error     string        `json:"error,omitempty" doc:"Why the value was not decoded as its role says; absent when it was."`

	Used      *int64     `json:"used,omitempty" doc:"Quota: the count; concurrency set: members in flight."`
	Limit     *int64     `json:"limit,omitempty" doc:"The limit used is measured against; absent when not in Redis."`
	UsedRatio *float64   `json:"used_ratio,omitempty" doc:"used / limit (1 = full); absent without a limit."`
	Level     string     `json:"level,omitempty" enum:"ok,warn,full" doc:"full: at or past the limit (or a reservation without TTL); warn: 80% used, an orphaned reservation or an open breaker; absent when not measured."`
	ResetsAt  *time.Time `json:"resets_at,omitempty" doc:"Quota: the next period boundary."`
	Period    string     `json:"period,omitempty" doc:"Quota: the period its key names (202612)."`
	Past      bool       `json:"past" doc:"Quota: the key names an earlier period than now's: a record, not a live budget."`

	Amount *Decimal `json:"amount,omitempty" doc:"Balance, reservation, config: the number as written."`
	Value  *Name    `json:"value,omitempty" doc:"Config or breaker hint: the value as written, when it is not a number."`
	Open   bool     `json:"open" doc:"Breaker hint: the breaker is open."`

	NoTTL       bool   `json:"no_ttl" doc:"Reservation: a violation, it never expires."`
	AgeMs       *int64 `json:"age_ms,omitempty" doc:"Reservation: since it was written (from the pack's TTL); absent when not known."`
	Orphan      string `json:"orphan,omitempty" enum:"not_checked,hidden,in_flight,orphaned,young,unknown" doc:"Reservation: in_flight: in a concurrency set (in_set); orphaned: overdue and in none; young: in none yet, not overdue; unknown: in none of the sets known, but not every set is known yet; hidden: the sets are sensitive; not_checked: the check did not run."`
	InSet       *Name  `json:"in_set,omitempty" doc:"Reservation: the concurrency set holding its request id."`
	SetsChecked int    `json:"sets_checked,omitempty" minimum:"0" doc:"Reservation: concurrency sets looked in."`

	MembersChecked int         `json:"members_checked,omitempty" minimum:"0" doc:"Concurrency set: members checked for a reservation (at most one page)."`
	Orphans        []Name      `json:"orphans,omitempty" doc:"Concurrency set: members checked whose reservation is gone."`
	MoreMembers    bool        `json:"more_members" doc:"Concurrency set: it holds members that were not checked."`
	TTLViolation   bool        `json:"ttl_violation" doc:"The TTL breaks the pack's policy."`
	Actions        []KeyAction `json:"actions,omitempty" doc:"Reservation: the action that releases it (release-reservation) when it is orphaned and the caller's role may run it: preview it with POST /api/v1/actions/preview {kind, conn, db, key}; absent otherwise."`
}

// Quotas maps the Quotas page's data: the connection's pack choice and
// status, and its walk's snapshot. errText hides credentials in the
// walk's error.
func Quotas(conn string, pc redisview.PackChoice, st redisview.Status, s quotas.Snapshot, errText ErrText) QuotasPage {
	b := s.Budget
	p := QuotasPage{Conn: conn, Redis: redisState(st), Pack: packState(pc), Error: errText.text(s.Err), Families: list[QuotaFamily](nil), Configs: []QuotaRow{},
		Walk: QuotaWalk{Passes: s.Pass, Seen: s.Seen, Scans: s.Scans, CompletedAt: timePtr(s.CompletedAt), ReadAt: timePtr(s.Read),
			TopN: b.TopN, ScansPerStep: b.Scans, ScanCount: b.Count}}
	switch {
	case !s.Started:
		p.Walk.State = WalkNotStarted
	case s.Pass == 0:
		p.Walk.State = WalkFirstPass
	default:
		p.Walk.State = WalkWalked
	}
	subject, _ := quotas.SubjectOf(pc.Pack)
	for _, fr := range s.Families {
		f := fr.Family
		qf := QuotaFamily{FamilyRef: familyRef(f, fr.DB), Pattern: f.Pattern.String(), Keys: fr.Keys, Cut: fr.Cut, Rows: make([]QuotaRow, 0, len(fr.Rows))}
		quotaPolicy(&qf, f)
		for _, r := range fr.Rows {
			qf.Rows = append(qf.Rows, quotaRow(subject, r))
		}
		p.Families.Items = append(p.Families.Items, qf)
	}
	for _, r := range s.Configs {
		p.Configs = append(p.Configs, quotaRow(subject, r))
	}
	return p
}

func quotaPolicy(qf *QuotaFamily, f *schema.Family) {
	switch p := f.Params.(type) {
	case *schema.QuotaParams:
		qf.Unit, qf.Period = p.Unit, p.Period
		if p.Limit > 0 {
			qf.Limit = ptr(p.Limit)
		}
	case *schema.ConcurrencySetParams:
		if p.Limit > 0 {
			qf.Limit = ptr(p.Limit)
		}
	case *schema.ReservationParams:
		qf.Unit, qf.MaxTTLMs = p.Unit, msPtr(f.TTL.Max, f.TTL.Max > 0)
	case *schema.BalanceParams:
		qf.Unit = p.Unit
	}
}

func quotaRow(subject quotas.Subject, r quotas.Row) QuotaRow {
	v := QuotaRow{Key: Name(r.Key), Subject: placeholders(r.Vars), ReadAt: Time(r.Read), TTLMs: msPtr(r.TTL, !r.Gone), Gone: r.Gone}
	if subject.Name != "" {
		if id := r.Var(subject.Name); id != "" {
			v.SubjectID = ptr(Name(id))
		}
	}
	if r.Family.Sensitive || r.Note == quotas.Hidden {
		v.Hidden = true
		return v
	}
	v.TTLViolation = !r.NoTTL && r.Family.TTL.Violation(r.TTL).Broken()
	if r.Note != "" || r.Gone {
		v.Error = r.Note
		return v
	}
	switch r.Family.Role {
	case schema.RoleQuota, schema.RoleConcurrencySet:
		usedRow(&v, r)
	case schema.RoleBalance, schema.RoleConfig:
		amountRow(&v, r.Amount)
	case schema.RoleReservation:
		amountRow(&v, r.Amount)
		reservationRow(&v, r)
	case schema.RoleBreakerHint:
		v.Value, v.Open = ptr(Name(r.State)), r.Open
		if r.Open {
			v.Level = LevelWarn
		}
	}
	return v
}

func amountRow(v *QuotaRow, s string) {
	if v.Amount = decimal(s); v.Amount == nil {
		v.Value = ptr(Name(s))
	}
}

func usedRow(v *QuotaRow, r quotas.Row) {
	v.Used = ptr(r.Used)
	if r.Limit > 0 {
		v.Limit, v.UsedRatio = ptr(r.Limit), ptr(r.Percent/100)
		switch {
		case r.Percent >= 100:
			v.Level = LevelFull
		case r.Percent >= 80:
			v.Level = LevelWarn
		default:
			v.Level = LevelOK
		}
	}
	v.ResetsAt, v.Period, v.Past = timePtr(r.ResetsAt), r.Period, r.Past
	if r.Family.Role == schema.RoleConcurrencySet && r.Checked > 0 {
		v.MembersChecked, v.Orphans, v.MoreMembers = r.Checked, names(r.Orphans), r.MoreMems
	}
}

func reservationRow(v *QuotaRow, r quotas.Row) {
	v.NoTTL, v.AgeMs, v.SetsChecked = r.NoTTL, msPtr(r.Age, r.Age > 0), r.SetsChecked
	switch {
	case !r.SetsKnown:
		v.Orphan = OrphanNotChecked
	case r.SetsSensitive:
		v.Orphan, v.SetsChecked = OrphanHidden, 0
	case r.InSet != "":
		v.Orphan, v.InSet = OrphanInFlight, ptr(Name(r.InSet))
	case r.Orphaned:
		v.Orphan = OrphanOrphaned
	case !r.SetsComplete:
		v.Orphan = OrphanUnknown
	default:
		v.Orphan = OrphanYoung
	}
	switch {
	case r.NoTTL:
		v.Level = LevelFull
	case r.Orphaned:
		v.Level = LevelWarn
	}
}
