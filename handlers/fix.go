package handlers

import (
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
)

// fixTitles names the link of each fixing action action.Fix may choose.
var fixTitles = map[string]string{
	action.KindUnlockLogin:   "Unlock…",
	action.KindClearFailures: "Clear failures…",
	action.KindForceUnlock:   "Release…",
	action.KindResetLimit:    "Reset…",
}

// appendFix links the preview of the fixing action kind ("" none).
func appendFix(links []views.ActionLink, kind, conn string, db int, key string) []views.ActionLink {
	if kind == "" {
		return links
	}
	return appendLink(links, previewLink(fixTitles[kind], kind, conn, db, key))
}
