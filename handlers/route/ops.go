package route

import "net/url"

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
