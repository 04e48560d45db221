package apiv1

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The contract knows nothing of HTTP handlers, templ, view models or a
// Redis client: it maps the domain's page data, so a view's rename or a
// handler's change cannot move the JSON.
func TestContractImportsNoHandlerViewOrClient(t *testing.T) {
	banned := []string{"github.com/labstack/echo", "github.com/a-h/templ", "github.com/keydeck/keydeck/views", "github.com/keydeck/keydeck/handlers", "github.com/redis/go-redis"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range banned {
				if p == b || strings.HasPrefix(p, b+"/") {
					t.Errorf("%s imports %s", name, p)
				}
			}
		}
	}
	if checked < 12 {
		t.Fatalf("only %d files checked", checked)
	}
}
