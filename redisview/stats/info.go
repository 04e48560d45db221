package stats

import (
	"strconv"
	"strings"
	"time"
)

// Info is a parsed INFO reply: section name → field → raw value.
type Info map[string]map[string]string

// ParseInfo parses the text of an INFO reply. Fields before any "# Section"
// header land in section "".
func ParseInfo(txt string) Info {
	out := Info{}
	section := ""
	for _, line := range strings.Split(txt, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			section = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(line, "#")))
			// An empty section (e.g. "# Keyspace" on an empty server) still
			// tells us the server supports it.
			if out[section] == nil {
				out[section] = map[string]string{}
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if out[section] == nil {
			out[section] = map[string]string{}
		}
		out[section][k] = v
	}
	return out
}

// Has reports whether the reply contained the section.
func (in Info) Has(section string) bool { _, ok := in[section]; return ok }

// Get finds a field in any section (field names are unique across INFO).
func (in Info) Get(field string) (string, bool) {
	for _, sec := range in {
		if v, ok := sec[field]; ok {
			return v, true
		}
	}
	return "", false
}

// Int returns an integer field; ok is false when absent or malformed.
func (in Info) Int(field string) (int64, bool) {
	v, ok := in.Get(field)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// Float returns a float field; ok is false when absent or malformed.
func (in Info) Float(field string) (float64, bool) {
	v, ok := in.Get(field)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f, err == nil
}

// KeyspaceDB is one "dbN:keys=…,expires=…,avg_ttl=…" line of INFO keyspace.
type KeyspaceDB struct {
	Index   int
	Keys    int64
	Expires int64
	AvgTTL  time.Duration
}

// Keyspace returns the databases listed in INFO keyspace, by index.
func (in Info) Keyspace() map[int]KeyspaceDB {
	out := map[int]KeyspaceDB{}
	for name, val := range in["keyspace"] {
		idx, err := strconv.Atoi(strings.TrimPrefix(name, "db"))
		if err != nil || !strings.HasPrefix(name, "db") {
			continue
		}
		db := KeyspaceDB{Index: idx}
		for _, kv := range strings.Split(val, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "keys":
				db.Keys = n
			case "expires":
				db.Expires = n
			case "avg_ttl":
				db.AvgTTL = time.Duration(n) * time.Millisecond
			}
		}
		out[idx] = db
	}
	return out
}

// KeyspaceOf is INFO keyspace over the INFO replies of every primary
// (redisview.InfoEach): each database's keys and keys with an expiry
// summed, its average time to live weighted by the keys with one.
func KeyspaceOf(txts []string) map[int]KeyspaceDB {
	out := map[int]KeyspaceDB{}
	ttl := map[int]float64{}
	for _, txt := range txts {
		for idx, ks := range ParseInfo(txt).Keyspace() {
			sum := out[idx]
			sum.Index = idx
			sum.Keys += ks.Keys
			sum.Expires += ks.Expires
			ttl[idx] += float64(ks.AvgTTL) * float64(ks.Expires)
			out[idx] = sum
		}
	}
	for idx, ks := range out {
		if ks.Expires > 0 {
			ks.AvgTTL = time.Duration(ttl[idx] / float64(ks.Expires))
			out[idx] = ks
		}
	}
	return out
}
