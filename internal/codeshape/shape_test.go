package codeshape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const (
	maxFuncLines = 80
	maxFileLines = 500
	maxSleeps    = 10
)

// Every function and file of the product stays readable, and tests wait
// on clocks and conditions, not on time.
func TestCodeShape(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files, sleeps := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || strings.HasPrefix(rel, filepath.Join("cmd", "bench-"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_templ.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "_test.go") {
			sleeps += countSleeps(f)
			return nil
		}
		files++
		if n := fset.Position(f.End()).Line; n > maxFileLines {
			t.Errorf("%s: %d lines (at most %d)", rel, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: func %s is %d lines (at most %d)", rel, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 200 {
		t.Fatalf("only %d files checked: the walk missed the tree", files)
	}
	if sleeps > maxSleeps {
		t.Errorf("%d time.Sleep calls in tests (at most %d): wait on a fake clock or a condition", sleeps, maxSleeps)
	}
	t.Logf("%d files checked; %d time.Sleep calls in tests", files, sleeps)
}

func countSleeps(f *ast.File) int {
	n := 0
	ast.Inspect(f, func(x ast.Node) bool {
		if sel, ok := x.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sleep" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" {
				n++
			}
		}
		return true
	})
	return n
}
