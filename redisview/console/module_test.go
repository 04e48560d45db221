package console

import (
	"errors"
	"testing"

	"github.com/keydeck/keydeck/redisview/action"
)

// entry is a raw COMMAND entry as the server sends it (RESP3 maps for the
// key specs): name, arity, flags, first, last, step, ACL categories, tips,
// key specs.
func entry(name string, flags []any, first int64, acl []any, specs []any) []any {
	return []any{name, int64(-2), flags, first, first, int64(1), acl, []any{}, specs}
}

var roKeySpec = map[any]any{
	"flags":        []any{"RO", "access"},
	"begin_search": map[any]any{"type": "index", "spec": map[any]any{"index": int64(1)}},
	"find_keys":    map[any]any{"type": "range", "spec": map[any]any{"lastkey": int64(0), "keystep": int64(1), "limit": int64(0)}},
}

// A module's commands (a dotted name, or no ACL category beside core
// commands that have them) that name no keys are refused to everyone: they
// may read documents or series the console cannot check. A module command
// with no flag at all is no read.
func TestModuleCommands(t *testing.T) {
	cmds, err := parseTable([]any{
		entry("get", []any{"readonly", "fast"}, 1, []any{"@read", "@string", "@fast"}, []any{roKeySpec}),
		entry("ft.search", []any{"readonly"}, 0, []any{}, []any{}),
		entry("tsmget", []any{"readonly"}, 0, []any{}, []any{}),
		entry("json.get", []any{"readonly"}, 1, []any{}, []any{roKeySpec}),
		entry("json.debug", []any{}, 1, []any{}, []any{roKeySpec}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if cmds["get"].Module || !cmds["ft.search"].Module || !cmds["tsmget"].Module || !cmds["json.get"].Module {
		t.Fatalf("modules: get %v ft.search %v tsmget %v json.get %v", cmds["get"].Module, cmds["ft.search"].Module, cmds["tsmget"].Module, cmds["json.get"].Module)
	}
	for _, name := range []string{"ft.search", "tsmget"} {
		args := []string{name, "idx", "*"}
		if err := refuseByClass(name, cmds[name], Classify(cmds[name], args), Request{Args: args, Level: action.Admin, AllowDangerous: true}); !errors.Is(err, action.ErrForbidden) {
			t.Errorf("%s for an admin with the flag: %v", name, err)
		}
	}
	if err := refuseByClass("json.get", cmds["json.get"], Classify(cmds["json.get"], []string{"json.get", "k"}), Request{Args: []string{"json.get", "k"}, Level: action.Viewer}); err != nil {
		t.Errorf("JSON.GET names its key: judged by it, %v", err)
	}
	dbg := cmds["json.debug"]
	if cl := Classify(dbg, []string{"json.debug", "k"}); cl != Dangerous || !Unflagged(dbg) {
		t.Errorf("JSON.DEBUG (no flag) is %s", cl)
	}
	if err := refuseByClass("json.debug", dbg, Dangerous, Request{Args: []string{"json.debug", "k"}, Level: action.Viewer}); !errors.Is(err, action.ErrForbidden) {
		t.Errorf("JSON.DEBUG for a viewer: %v", err)
	}
}
