package route

import (
	"net/url"
	"strconv"
)

// Paths of a connection's operational views (issues 12 and 13): the rate
// limits, locks and quotas of its packs, one gateway API key, vertique's
// buckets, the ban list and one user's keys.
const (
	Limits     = "/c/:conn/limits"
	Locks      = "/c/:conn/locks"
	Quotas     = "/c/:conn/quotas"
	GatewayKey = "/c/:conn/gateway/key"
	Vertique   = "/c/:conn/vertique"
	Bans       = "/c/:conn/bans"
	User       = "/c/:conn/user"
	Violations = "/c/:conn/violations"
)

// ViolationsURL is the list of every schema violation of a connection.
func ViolationsURL(conn string) string { return OverviewURL(conn) + "/violations" }

// LimitsURL is a connection's rate limits page.
func LimitsURL(conn string) string { return OverviewURL(conn) + "/limits" }

// LocksURL is a connection's locks page.
func LocksURL(conn string) string { return OverviewURL(conn) + "/locks" }

// QuotasURL is a connection's quotas and budgets page.
func QuotasURL(conn string) string { return OverviewURL(conn) + "/quotas" }

// GatewayKeyPath is the gateway API key page without its key id.
func GatewayKeyPath(conn string) string { return OverviewURL(conn) + "/gateway/key" }

// GatewayKeyURL is one gateway API key's page (bytes carried exactly).
func GatewayKeyURL(conn, keyID string) string {
	return GatewayKeyPath(conn) + "?id=" + url.QueryEscape(keyID)
}

// VertiqueURL is a connection's vertique bucket inventory.
func VertiqueURL(conn string) string { return OverviewURL(conn) + "/vertique" }

// BansURL is a connection's ban list.
func BansURL(conn string) string { return OverviewURL(conn) + "/bans" }

// BanCheckURL checks one name against the ban list (bytes carried exactly).
func BanCheckURL(conn, name string) string { return BansURL(conn) + "?check=" + url.QueryEscape(name) }

// UserPath is the user page without its name.
func UserPath(conn string) string { return OverviewURL(conn) + "/user" }

// UserURL is everything about one user on a connection (bytes carried
// exactly).
func UserURL(conn, name string) string { return UserPath(conn) + "?name=" + url.QueryEscape(name) }

// RowsPage is where a Rate limits or Locks page stands: its filter, and
// the rows of one family it shows from Off on (most constrained first).
// Every other family shows its first rows.
type RowsPage struct {
	Filter string
	Fam    string // family id
	DB     int
	Off    int
}

// Values are p's query parameters, byte-exact.
func (p RowsPage) Values() url.Values {
	q := url.Values{}
	if p.Filter != "" {
		q.Set("q", p.Filter)
	}
	if p.Off > 0 {
		q.Set("fam", p.Fam)
		q.Set("db", strconv.Itoa(p.DB))
		q.Set("off", strconv.Itoa(p.Off))
	}
	return q
}

// URL is p on base (LimitsURL or LocksURL), scrolled to its family.
func (p RowsPage) URL(base string) string {
	if q := p.Values().Encode(); q != "" {
		base += "?" + q
	}
	if p.Fam == "" {
		return base
	}
	return base + "#" + FamilyAnchor(p.Fam, p.DB)
}

// FamilyAnchor is the id of a family's section on the Rate limits and
// Locks pages.
func FamilyAnchor(fam string, db int) string { return "fam-" + fam + "-" + strconv.Itoa(db) }

// ParseRowsPage reads the parameters RowsPage.Values writes. An offset
// that is not a positive number, or without its family and database, is
// the first page.
func ParseRowsPage(q url.Values) RowsPage {
	p := RowsPage{Filter: q.Get("q")}
	off, err1 := strconv.Atoi(q.Get("off"))
	db, err2 := ParseDB(q.Get("db"))
	if err1 == nil && err2 == nil && off > 0 && q.Get("fam") != "" {
		p.Fam, p.DB, p.Off = q.Get("fam"), db, off
	}
	return p
}
