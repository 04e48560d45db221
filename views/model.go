// Package views holds the templ layout, components and pages. Its view
// models are plain strings and numbers prepared by handlers: components
// never see Redis types.
package views

// Page is what the layout needs on every page.
type Page struct {
	Title  string
	Nav    []NavItem
	Demo   bool
	Active string // the connection shown, if any

	CSRF       string // token for forms on this page
	User       string // "" when nobody is signed in
	Role       string
	SignedIn   bool // a session a user can end
	OpenAccess bool // no sign-in configured: everyone here is admin
	ReadOnly   bool
	CanAudit   bool // show the audit link
}

// NavItem is one connection in the top bar.
type NavItem struct {
	Name   string
	Href   string
	Active bool
}

// OverviewVM is the live overview of one connection.
type OverviewVM struct {
	Conn    string
	Display string
	WSURL   string // websocket URL subscribing to this overview

	Connected  bool
	StatusText string // "connected" or "disconnected since 22:14:03"
	StatusErr  string
	ReadErr    string

	Server    []Tile
	Spark     []Spark
	DBs       []DBRow
	TotalKeys string
	// Pack says which schema pack explains the keys, and how well.
	Pack string
	// KeyspaceNote says where per-database numbers come from.
	KeyspaceNote string
	Unavailable  []string // panels the server cannot serve, with reasons
}

// Tile is one labelled number.
type Tile struct {
	Label  string
	Value  string
	Hint   string // shown under the value, e.g. "of 2.0 GiB max"
	TestID string
	Muted  bool // the value is missing; Value holds the reason
}

// Spark is a small line chart.
type Spark struct {
	Label  string
	Last   string
	Points string // SVG polyline points in a 120×32 box
	TestID string
	Empty  string // shown instead when there are fewer than two points
}

// DBRow is one database of the overview table.
type DBRow struct {
	Index    int
	Href     string // the database's statistics page
	Keys     string
	Expires  string
	AvgTTL   string
	SharePct int // share of the server's keys, for the bar
	Note     string
}

// DBPageVM is the per-database statistics page.
type DBPageVM struct {
	Conn      string
	DB        int
	WSURL     string
	Pack      string // "eisland — matched 97% of 1,500 sampled keys"; "" when none
	NoPack    string // why there is no pack
	Total     string
	Status    string // sweep progress in words
	Budget    string
	Err       string
	Estimated bool

	Domains    []ShareRow
	Families   []FamilyRow
	Violations []ViolationRow
	ViolCount  string
	Unmatched  []PrefixRow
	UnmCount   string
	ByMemory   []BigKeyRow
	ByElements []BigKeyRow
	MemoryNote string
	TTLLabels  []string
}

// ShareRow is a count and memory with their shares.
type ShareRow struct {
	Name    string
	Keys    string
	KeysPct int
	Memory  string
	MemPct  int
}

// FamilyRow is one key family of a database.
type FamilyRow struct {
	ID         string
	Domain     string
	Role       string
	Type       string
	TTLPolicy  string
	Sensitive  bool
	Keys       string
	KeysPct    int
	Memory     string
	MemPct     int
	TTL        []HistCell
	Violations string
	HasViol    bool
	Pattern    string
}

// HistCell is one bucket of a TTL histogram.
type HistCell struct {
	Label string
	Count string
	Level int // 0–4, for the cell's shade
}

// ViolationRow is one key that breaks its pack.
type ViolationRow struct{ Key, Family, Problem, Href string }

// PrefixRow groups unmatched keys.
type PrefixRow struct {
	Prefix   string
	Keys     string
	Examples []string
}

// BigKeyRow is one of the biggest keys.
type BigKeyRow struct {
	Key, Family, Type, Size, Href string
}
