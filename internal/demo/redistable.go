package demo

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
)

// redistable.json.gz is what a real redis-server (the version in the file)
// answers about itself: COMMAND INFO and COMMAND DOCS for every command, and
// CONFIG GET * with its defaults. The demo answers COMMAND and CONFIG GET
// from it, so the console classifies the demo's commands by Redis's own
// table and the server page lists every parameter Redis has. It is written
// by TestRedisTableIsTheInstalledRedis -update-redis-table, which otherwise
// checks it against the installed redis-server.
//
//go:generate go test -run TestRedisTableIsTheInstalledRedis -args -update-redis-table
//go:embed redistable.json.gz
var redisTableGz []byte

type redisTable struct {
	Version string `json:"version"`
	// Info is COMMAND INFO's entry of each command (RESP3), by name.
	Info map[string]reply `json:"info"`
	// Docs is COMMAND DOCS's value of each command (RESP3), by name.
	Docs map[string]reply `json:"docs"`
	// Config is CONFIG GET * of a server started with its defaults, by
	// name.
	Config [][2]string `json:"config"`
	// Immutable lists the parameters CONFIG SET refuses at run time.
	Immutable []string `json:"immutable"`
}

var loadRedisTable = sync.OnceValue(func() *redisTable {
	zr, err := gzip.NewReader(bytes.NewReader(redisTableGz))
	if err != nil {
		panic("demo: redistable.json.gz: " + err.Error())
	}
	t := &redisTable{}
	if err := json.NewDecoder(zr).Decode(t); err != nil {
		panic("demo: redistable.json.gz: " + err.Error())
	}
	return t
})

func (t *redisTable) config(name string) string {
	for _, p := range t.Config {
		if p[0] == name {
			return p[1]
		}
	}
	return ""
}

func (t *redisTable) setConfig(name, value string) {
	for i, p := range t.Config {
		if p[0] == name {
			t.Config[i][1] = value
		}
	}
}

func (t *redisTable) immutable(name string) bool {
	for _, p := range t.Immutable {
		if p == name {
			return true
		}
	}
	return false
}

// command is what the demo reads of one COMMAND INFO entry.
type command struct {
	name  string // lower case; "config|get" for a subcommand
	arity int
	entry reply
	specs []keySpec
	flags map[string]bool
	subs  map[string]*command // by subcommand name ("get")
}

// keySpec is one of a command's key specifications (Redis 7).
type keySpec struct {
	flags map[string]bool
	// begin_search: "index" (index) or "keyword" (keyword, startfrom);
	// anything else is "unknown".
	bsType    string
	index     int
	keyword   string
	startfrom int
	// find_keys: "range" (lastkey, keystep, limit) or "keynum" (keynumidx,
	// firstkey, keystep); anything else is "unknown".
	fkType                     string
	lastkey, keystep, limit    int
	keynumidx, firstkey, kstep int
}

func parseCommand(e reply) *command {
	c := &command{name: e.A[0].S, arity: int(e.A[1].N), entry: e, flags: map[string]bool{}}
	for _, f := range e.A[2].A {
		c.flags[f.S] = true
	}
	for _, s := range e.A[8].A {
		c.specs = append(c.specs, parseKeySpec(s))
	}
	if len(e.A) > 9 && len(e.A[9].A) > 0 {
		c.subs = map[string]*command{}
		for _, se := range e.A[9].A {
			sc := parseCommand(se)
			_, sub, _ := strings.Cut(sc.name, "|")
			c.subs[sub] = sc
		}
	}
	return c
}

func parseKeySpec(s reply) keySpec {
	ks := keySpec{flags: map[string]bool{}}
	if f, ok := s.get("flags"); ok {
		for _, e := range f.A {
			ks.flags[e.S] = true
		}
	}
	num := func(r reply, field string) int {
		v, _ := r.get(field)
		return int(v.N)
	}
	if bs, ok := s.get("begin_search"); ok {
		typ, _ := bs.get("type")
		spec, _ := bs.get("spec")
		ks.bsType = typ.S
		ks.index = num(spec, "index")
		kw, _ := spec.get("keyword")
		ks.keyword = kw.S
		ks.startfrom = num(spec, "startfrom")
	}
	if fk, ok := s.get("find_keys"); ok {
		typ, _ := fk.get("type")
		spec, _ := fk.get("spec")
		ks.fkType = typ.S
		ks.lastkey, ks.keystep, ks.limit = num(spec, "lastkey"), num(spec, "keystep"), num(spec, "limit")
		ks.keynumidx, ks.firstkey, ks.kstep = num(spec, "keynumidx"), num(spec, "firstkey"), num(spec, "keystep")
	}
	return ks
}
