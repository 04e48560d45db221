package handlers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Handlers only present: they import no Redis client and never take one
// from a connection (Conn.DB, Conn.Client, Conn.CrossDBPipeline): every read is a domain call
// that returns page data. A handler that sends a command fails here.
func TestHandlersHoldNoRedisClient(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_templ.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/redis/go-redis") {
				t.Errorf("%s imports %s", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "DB" || sel.Sel.Name == "Client" || sel.Sel.Name == "CrossDBPipeline") && len(call.Args) <= 1 {
				t.Errorf("%s: %s takes a Redis client from a connection", fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("only %d handler files checked", checked)
	}
}
