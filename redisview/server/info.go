package server

import (
	"context"
	"github.com/keydeck/keydeck/redisview"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/views/format"
)

// Info is INFO's reply by section, in the server's order.
type Info struct {
	Sections []InfoSection
}

// InfoSection is one "# Name" block of INFO.
type InfoSection struct {
	Name   string // "Server", "Memory", "Keyspace", …
	Fields []Field
}

// Field is one name:value line of INFO (or one entry of MEMORY STATS),
// read for a person.
type Field struct {
	Name string
	Raw  string // as the server gave it
	// Shown is Raw in units: "1.2 MiB", "3d 4h", "92.4 %"; Raw when it
	// has none.
	Shown string
	// Help explains a field people ask about ("" for the rest).
	Help string
}

// Section finds a section by name (case-insensitive).
func (i Info) Section(name string) (InfoSection, bool) {
	for _, s := range i.Sections {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return InfoSection{}, false
}

// Field finds a field of any section by name.
func (i Info) Field(name string) (Field, bool) {
	for _, s := range i.Sections {
		for _, f := range s.Fields {
			if f.Name == name {
				return f, true
			}
		}
	}
	return Field{}, false
}

// ReadInfo reads INFO's default sections (server, clients, memory,
// persistence, stats, replication, cpu, modules, errorstats, cluster,
// keyspace) — not "all", whose per-command statistics run to hundreds of
// lines.
func ReadInfo(ctx context.Context, srv redisview.Server) (Info, error) {
	c := srv.Client()
	txt, err := c.Info(ctx).Result()
	if err != nil {
		return Info{}, refusal("INFO", err)
	}
	return ParseInfo(txt), nil
}

// ParseInfo reads INFO's text. The keyspace hit ratio, which INFO leaves
// to the reader, is added to Stats after keyspace_misses. The *_human
// twins of byte fields are left out: every byte field is shown in units.
func ParseInfo(txt string) Info {
	var info Info
	var cur *InfoSection
	raw := map[string]string{}
	for _, line := range strings.Split(txt, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#"):
			info.Sections = append(info.Sections, InfoSection{Name: strings.TrimSpace(strings.TrimPrefix(line, "#"))})
			cur = &info.Sections[len(info.Sections)-1]
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if cur == nil {
			info.Sections = append(info.Sections, InfoSection{Name: "Info"})
			cur = &info.Sections[len(info.Sections)-1]
		}
		raw[name] = value
		if base, human := strings.CutSuffix(name, "_human"); human && raw[base] != "" {
			continue
		}
		cur.Fields = append(cur.Fields, infoField(name, value))
		if name == "keyspace_misses" {
			if f, ok := hitRatio(raw); ok {
				cur.Fields = append(cur.Fields, f)
			}
		}
	}
	return info
}

// hitRatio is keyspace_hits / (hits + misses), the share of key lookups
// that found their key.
func hitRatio(raw map[string]string) (Field, bool) {
	hits, err1 := strconv.ParseFloat(raw["keyspace_hits"], 64)
	misses, err2 := strconv.ParseFloat(raw["keyspace_misses"], 64)
	if err1 != nil || err2 != nil {
		return Field{}, false
	}
	f := Field{Name: "keyspace_hit_ratio", Help: infoHelp["keyspace_hit_ratio"]}
	if hits+misses == 0 {
		f.Raw, f.Shown = "", "no key lookups yet"
		return f, true
	}
	r := hits / (hits + misses)
	f.Raw, f.Shown = strconv.FormatFloat(r, 'f', 4, 64), format.Percent(r, 1)
	return f, true
}

func infoField(name, value string) Field {
	return Field{Name: name, Raw: value, Shown: unitOf(name, value), Help: infoHelp[name]}
}

// unitOf shows value in the unit the field's name says it has.
func unitOf(name, value string) string {
	n, err := strconv.ParseInt(value, 10, 64)
	f, ferr := strconv.ParseFloat(value, 64)
	switch {
	case ferr != nil:
		return value
	case isBytes(name) && err == nil:
		return format.Bytes(n)
	case strings.HasSuffix(name, "_in_seconds") || strings.HasSuffix(name, "_sec") && !strings.HasSuffix(name, "_per_sec"):
		if err == nil && n >= 0 {
			return format.Duration(time.Duration(n) * time.Second)
		}
	case strings.HasSuffix(name, "_usec"):
		if err == nil && n >= 0 {
			return format.Duration(time.Duration(n) * time.Microsecond)
		}
	case strings.HasSuffix(name, "_in_days"):
		return value + " days"
	case strings.HasSuffix(name, "_kbps"):
		return strconv.FormatFloat(f, 'f', 2, 64) + " KB/s"
	case strings.HasSuffix(name, "_perc") || strings.HasSuffix(name, "_percentage"):
		return strconv.FormatFloat(f, 'f', 1, 64) + "%"
	case strings.HasSuffix(name, "_ratio") || name == "fragmentation":
		return strconv.FormatFloat(f, 'f', 2, 64) + "×"
	case strings.HasSuffix(name, "_per_sec"):
		return format.Count(n) + "/s"
	case strings.HasSuffix(name, "_time") && n > 1e9:
		return format.Time(time.Unix(n, 0))
	case err == nil && !strings.HasSuffix(name, "_port") && name != "process_id" && name != "tcp_port":
		return format.Count(n)
	}
	return value
}

// isBytes reports an INFO field whose value is a count of bytes.
func isBytes(name string) bool {
	for _, not := range []string{"_ratio", "_perc", "_policy", "_allocator", "_offset", "_length"} {
		if strings.HasSuffix(name, not) {
			return false
		}
	}
	for _, pre := range []string{"used_memory", "mem_", "allocator_", "rss_", "maxmemory", "total_system_memory"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	for _, suf := range []string{"_bytes", "_buffer", "_size"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}
