package leaderboard

import (
	"maps"
	"slices"
	"strings"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Plan is what the pack says about one leaderboard key: its
// order and how to name each member's metadata and high-score keys.
type Plan struct {
	DB       int
	Key      string
	Family   *schema.Family // nil: the pack does not call the key a leaderboard
	Params   *schema.LeaderboardParams
	Desc     bool
	MetaWhy  string            // why there is no metadata, "" when there is
	Fields   []string          // from the meta family's params, nil when not listed
	Labels   map[string]string // column titles by field, from the pack
	Formats  map[string]string // what each field's value means (schema.MetaFormats)
	vars     map[string]string
	member   string
	metaMode int // metaNone, metaAny or metaNoColon: how the script builds keys
	prefix   string
	suffix   string
}

const (
	metaNone    = 0 // the script reads no metadata
	metaAny     = 1 // meta key = prefix .. member .. suffix, member non-empty
	metaNoColon = 2 // the same, for members without ':' only
)

// memberSentinel stands for the member while the meta key template is
// built; it is accepted by the classes the script can check (any, segment).
const memberSentinel = "\x01keydeck-member\x01"

// NewPlan classifies key and works out how to read its rows.
func NewPlan(c *redisview.Conn, db int, key string) Plan {
	pl := Plan{DB: db, Key: key, Desc: true}
	cls := c.Classifier()
	if cls == nil {
		pl.MetaWhy = "no schema pack: the key is read as a plain sorted set"
		return pl
	}
	m, ok := cls.Match(db, key)
	if !ok || m.Family.Role != schema.RoleLeaderboard {
		pl.MetaWhy = "the schema pack does not call this key a leaderboard"
		return pl
	}
	pl.Family, pl.vars = m.Family, m.Map()
	params, _ := m.Family.Params.(*schema.LeaderboardParams)
	pl.Params = params
	if params == nil {
		pl.MetaWhy = "the leaderboard family has no parameters"
		return pl
	}
	pl.Desc = params.Order != "asc"
	if params.Meta == nil {
		pl.MetaWhy = "the leaderboard family names no metadata hash"
		return pl
	}
	if params.Meta.Family != nil && params.Meta.Family.Sensitive {
		// Never read, so never shown nor sent: every read path checks the
		// sensitivity of each key it touches, companions included.
		pl.MetaWhy = "the metadata family (" + params.Meta.Family.ID + ") is sensitive: its values are never shown"
		return pl
	}
	if mp, ok := params.Meta.Family.Params.(*schema.LeaderboardMetaParams); ok {
		if len(mp.Fields) > 0 {
			pl.Fields = slices.Clone(mp.Fields)
		}
		pl.Labels, pl.Formats = mp.Labels, mp.Formats
	}
	refPhs, famPhs := params.Meta.Pattern.Placeholders(), params.Meta.Family.Pattern.Placeholders()
	mode := metaNone
	for i, ph := range refPhs {
		if ph.Name == params.Member {
			// The script can build keys whose member placeholder takes any
			// non-empty text, or any without ':'; other classes (digits,
			// fixed lengths, base64) are left to Go.
			if i < len(famPhs) && famPhs[i].Len == 0 {
				switch famPhs[i].Class {
				case schema.ClassAny:
					mode = metaAny
				case schema.ClassSegment:
					mode = metaNoColon
				}
			}
			continue
		}
		if _, ok := pl.vars[ph.Name]; !ok {
			pl.MetaWhy = "the metadata pattern needs {" + ph.Name + "}, which the leaderboard key does not hold"
			return pl
		}
	}
	if mode == metaNone {
		pl.member = params.Member // keys built per member by Go
		return pl
	}
	vars := maps.Clone(pl.vars)
	vars[params.Member] = memberSentinel
	tmpl, err := params.Meta.Key(vars)
	if err != nil {
		// A leaderboard value does not fit the meta pattern (a game id with
		// ':' where the meta family wants a segment): no member of this
		// board has a metadata key.
		pl.MetaWhy = "no metadata key can be built for this leaderboard: " + err.Error()
		return pl
	}
	pl.member = params.Member
	if strings.Count(tmpl, memberSentinel) == 1 {
		pl.prefix, pl.suffix, _ = strings.Cut(tmpl, memberSentinel)
		pl.metaMode = mode
	}
	return pl
}

// HasMeta reports whether members of this leaderboard have metadata keys.
func (pl Plan) HasMeta() bool { return pl.member != "" }

// MetaKey is the metadata hash of member; false when the pack names none
// or the member cannot fill the pattern (a ':' where a segment is wanted).
func (pl Plan) MetaKey(member string) (string, bool) {
	if !pl.HasMeta() {
		return "", false
	}
	return pl.companion(pl.Params.Meta, member)
}

func (pl Plan) companion(ref *schema.Ref, member string) (string, bool) {
	vars := maps.Clone(pl.vars)
	if vars == nil {
		vars = map[string]string{}
	}
	vars[pl.Params.Member] = member
	k, err := ref.Key(vars)
	return k, err == nil
}

// scriptable reports whether the whole read fits one script: metadata is
// read and its keys can be built by the script from a template.
func (pl Plan) scriptable() bool { return pl.HasMeta() && pl.metaMode != metaNone }
