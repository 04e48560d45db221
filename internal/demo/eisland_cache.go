package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// eIsland's read-through caches (DB 0, 1, 3) and the blooms beside them.

// Spring's GenericJackson2JsonRedisSerializer stores type hints beside the
// data; the cache values carry them so the console sees what production has.
const entityPkg = "com.eisland.server.entity."

var (
	serviceAPIs = []string{"weather", "translate", "agent-chat", "wallpaper", "mini-game", "payment",
		"avatar-upload", "issue-feedback", "toolbox", "identity"}
	appNames = []string{"eIsland-desktop", "eIsland-android", "eIsland-ios", "eIsland-mac", "eIsland-linux",
		"eIsland-harmony", "eIsland-cli"}
)

// entry is one key the seed writes and the simulator rewrites when a read
// misses it; ttl is the full TTL a fresh write gets.
type entry struct {
	key   string
	value any
	ttl   time.Duration
}

// defaultCacheEntries are DB 0's caches: Spring's @Cacheable entries,
// the announcement and the toolbox catalogue.
func defaultCacheEntries(rng *rand.Rand, now time.Time) []entry {
	const ttl = 5 * time.Minute
	var out []entry
	var statuses []any
	for i, api := range serviceAPIs {
		st := map[string]any{
			"@class":    entityPkg + "ServiceStatus",
			"id":        i + 1,
			"apiName":   api,
			"enabled":   api != "identity",
			"message":   nil,
			"updatedAt": now.Add(-time.Duration(i+1) * 61 * time.Hour).UnixMilli(),
		}
		statuses = append(statuses, st)
		out = append(out, entry{"server:service-status::" + api, js(st), ttl})
	}
	out = append(out, entry{"server:service-status-list::all", js([]any{"java.util.ArrayList", statuses}), ttl})

	var versions []any
	for i, app := range appNames[:5] {
		v := map[string]any{
			"@class":       entityPkg + "AppVersion",
			"id":           i + 1,
			"appName":      app,
			"version":      fmt.Sprintf("2.%d.%d", 3+i%3, 7*i%12),
			"forceUpdate":  i == 1,
			"downloadUrl":  "https://dl.eisland.dev/" + strings.ToLower(app) + "/latest",
			"releaseNotes": "修复若干问题，提升稳定性",
			"publishedAt":  now.Add(-time.Duration(i+2) * 97 * time.Hour).UnixMilli(),
		}
		versions = append(versions, v)
		out = append(out, entry{"server:app-version::" + app, js(v), ttl})
	}
	out = append(out, entry{"server:app-version-list::all", js([]any{"java.util.ArrayList", versions}), ttl})

	out = append(out, entry{"announcement:current:v2", js(map[string]any{
		"id":      17,
		"title":   "七月维护通知",
		"content": "7月12日 02:00–04:00 (UTC+8) 支付服务维护，期间无法充值。",
		"level":   "WARNING",
		"startAt": now.Add(-48 * time.Hour).Truncate(time.Hour).UnixMilli(),
		"endAt":   now.Add(6 * 24 * time.Hour).Truncate(time.Hour).UnixMilli(),
	}), 60 * time.Second})

	var software []any
	for i, name := range []string{"7-Zip", "Everything", "PowerToys", "Snipaste", "VS Code", "OBS Studio", "Clash Verge", "Bandizip"} {
		software = append(software, map[string]any{
			"id":          i + 1,
			"name":        name,
			"category":    []string{"utility", "dev", "media"}[i%3],
			"downloadUrl": "https://toolbox.eisland.dev/pkg/" + strings.ReplaceAll(strings.ToLower(name), " ", "-"),
			"enabled":     true,
		})
	}
	return append(out, entry{"toolbox:software:list", js(software), 300 * time.Second})
}

// DB 0: the caches above and the version bloom.
func seedDefaultCache(s *seeder) {
	for _, e := range defaultCacheEntries(s.rng, s.now) {
		s.set(e.key, e.value, s.left(e.ttl))
	}
	s.bloom("version:app:bloom", "version:app:set", VersionBloomBits, appNames)
}

// DB 1: avatar cache. Spring stores a String as a JSON string literal.
func seedAvatars(s *seeder) {
	for _, u := range s.some(60) {
		s.set("server:avatar-data::"+u, js(avatarValue(s.rng, u)), s.left(5*time.Minute))
	}
}

func avatarValue(rng *rand.Rand, user string) string {
	if rng.IntN(4) == 0 {
		// a tiny inline PNG, as users who upload small avatars get
		return "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAYAAADED76LAAAAH0lEQVQYV2NkYGD4z8DAwMgABXAGNgGwAAAkAAF/CwQAWM0OJv4AAAAASUVORK5CYII="
	}
	sum := sha256.Sum256([]byte(user))
	return "https://cdn.eisland.dev/avatar/" + hex.EncodeToString(sum[:10]) + ".webp"
}

var (
	wpKeywords = []string{"null", "anime", "风景", "4k", "cyberpunk", "nature", "minimal", "原神", "car", "space", "cat", "city night"}
	wpTypes    = []string{"static", "dynamic", "all"}
	wpSorts    = []string{"latest", "hot", "downloads"}
	wpNodes    = []string{"cn-sh", "cn-gz", "hk", "us-west"}
	wpSizes    = []int{20, 24, 30}
)

// publishedWallpapers are the IDs in wallpaper:detail:set, the same for the
// seed and the simulator.
var publishedWallpapers = func() []string {
	rng := rand.New(rand.NewPCG(0xE15, 3))
	var ids []string
	for id := 1; id <= 2400; id++ {
		if rng.IntN(4) == 0 {
			ids = append(ids, strconv.Itoa(id))
		}
	}
	return ids
}()

// wallpaperEntry is one random DB 3 cache entry, drawn in the proportions a
// busy wallpaper service shows: mostly list pages, then details.
func wallpaperEntry(rng *rand.Rand, users []string) entry {
	const ttl = 5 * time.Minute
	kw, typ, sortBy, node := pick(rng, wpKeywords), pick(rng, wpTypes), pick(rng, wpSorts), pick(rng, wpNodes)
	page, size, pro := 1+rng.IntN(25), pick(rng, wpSizes), rng.IntN(4) == 0
	switch n := rng.IntN(100); {
	case n < 74:
		return entry{fmt.Sprintf("server:wallpaper-list::%s:%s:%s:%d:%d:%s:%t", kw, typ, sortBy, page, size, node, pro),
			js(wallpaperPage(rng, page, size, node)), ttl}
	case n < 77:
		return entry{"server:wallpaper-list::total:" + kw + ":" + typ, 50 + rng.IntN(2300), ttl}
	case n < 80:
		status := pick(rng, []string{"PENDING", "PUBLISHED", "REJECTED", "ALL"})
		return entry{fmt.Sprintf("server:wallpaper-admin-list::%s:%s:%d:%d", status, kw, page%10+1, 20),
			js(wallpaperPage(rng, page%10+1, 20, "cn-sh")), ttl}
	case n < 85:
		owner := pick(rng, users)
		return entry{fmt.Sprintf("server:wallpaper-my-list::%s:%s:%s:%s:%d:%d:%s:%t", owner, kw, typ, sortBy, page%4+1, 20, node, pro),
			js(wallpaperPage(rng, page%4+1, 20, node)), ttl}
	case n < 87:
		return entry{"server:wallpaper-my-list::total:" + pick(rng, users) + ":" + kw + ":" + typ, rng.IntN(60), ttl}
	default:
		id := pick(rng, publishedWallpapers)
		return entry{fmt.Sprintf("server:wallpaper-detail::%s:%s:%t", id, node, pro), js(map[string]any{
			"@class": entityPkg + "Wallpaper",
			"id":     id,
			"title":  "wallpaper-" + id,
			"url":    fmt.Sprintf("https://%s.img.eisland.dev/w/%s.webp", node, id),
			"owner":  pick(rng, users),
			"tags":   []any{"java.util.ArrayList", []string{kw, "4k"}},
		}), ttl}
	}
}

func wallpaperPage(rng *rand.Rand, page, size int, node string) map[string]any {
	records := make([]any, 0, size)
	for range size {
		id := 1 + rng.IntN(2400)
		records = append(records, map[string]any{
			"id":        id,
			"title":     fmt.Sprintf("wallpaper-%d", id),
			"thumbUrl":  fmt.Sprintf("https://%s.img.eisland.dev/w/%d_t.webp", node, id),
			"width":     3840,
			"height":    2160,
			"downloads": rng.IntN(50000),
			"likes":     rng.IntN(9000),
		})
	}
	return map[string]any{"@class": entityPkg + "PageResult", "page": page, "pageSize": size,
		"total": 1800 + rng.IntN(600), "records": []any{"java.util.ArrayList", records}}
}

// DB 3: the busiest cache, so that key statistics have something to chew on.
func seedWallpapers(s *seeder) {
	for range 1800 {
		e := wallpaperEntry(s.rng, s.users[:150])
		s.set(e.key, e.value, s.left(e.ttl))
	}
	s.bloom("wallpaper:detail:bloom", "wallpaper:detail:set", WallpaperBloomBits, publishedWallpapers)
}
