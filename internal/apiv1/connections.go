package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// Connection is one configured Redis server and its state.
type Connection struct {
	Name string `json:"name" doc:"The connection's name, as in every path."`
	URL  string `json:"url" doc:"Its address, the password hidden."`
	// State: connecting before the first probe, then up or down.
	State   string     `json:"state" enum:"connecting,up,down" doc:"connecting (not probed yet), up or down."`
	Since   *time.Time `json:"since" doc:"When the state began (RFC 3339, UTC); null while connecting."`
	Checked *time.Time `json:"checked" doc:"The last probe; null before the first."`
	Error   string     `json:"error,omitempty" doc:"Why it is down (credentials never included)."`
	Pack    *string    `json:"pack" doc:"The schema pack that reads its keys; null when none is chosen (yet)."`
	// Databases: nil when they could not be read (see ReadError).
	Databases  []Database `json:"databases" doc:"Every database that holds keys (INFO keyspace); empty when they could not be read (read_error says why)."`
	ReadError  string     `json:"read_error,omitempty" doc:"Why the databases could not be read."`
	UsedMemory *int64     `json:"used_memory" doc:"Bytes the server uses; null when it does not say."`
}

// Database is one database's headline figures.
type Database struct {
	DB      int    `json:"db"`
	Keys    int64  `json:"keys"`
	Expires *int64 `json:"expires" doc:"Keys with a TTL; null when not known."`
	// AvgTTLMs is INFO's average TTL of the keys that have one.
	AvgTTLMs  *int64 `json:"avg_ttl_ms" doc:"Average TTL of the keys with one, in ms; null when not known."`
	Estimated bool   `json:"estimated" doc:"expires and avg_ttl_ms come from a partial sweep."`
}

// ConnectionOf maps a connection's status, pack name ("" none) and latest
// overview (read: false when none was read, as while it is down).
func ConnectionOf(name, url string, st redisview.Status, pack string, ov stats.Overview, read bool) Connection {
	c := Connection{Name: name, URL: url, State: "connecting", Error: st.Err, Databases: []Database{}}
	if !st.Checked.IsZero() {
		c.State = "down"
		if st.Up {
			c.State = "up"
		}
		since, checked := Time(st.Since), Time(st.Checked)
		c.Since, c.Checked = &since, &checked
	}
	if pack != "" {
		c.Pack = &pack
	}
	if !read {
		c.ReadError = "not read: the connection is down"
		return c
	}
	if ov.Err != "" {
		c.ReadError = ov.Err
		return c
	}
	if m := ov.Server.UsedMemory; m.OK {
		c.UsedMemory = &m.V
	}
	for _, db := range ov.DBs {
		d := Database{DB: db.Index, Keys: db.Keys, Estimated: db.Estimated}
		if db.Expires.OK {
			d.Expires = &db.Expires.V
		}
		if db.AvgTTL.OK {
			ms := Millis(db.AvgTTL.V)
			d.AvgTTLMs = &ms
		}
		c.Databases = append(c.Databases, d)
	}
	return c
}
