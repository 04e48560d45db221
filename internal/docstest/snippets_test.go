package docstest

import (
	"reflect"
	"strings"
	"testing"
)

func TestSnippetsMarks(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Mark
		errs       int
	}{
		{"runnable", "<!-- runnable -->\n```sh\nls\n```\n", []Mark{{Runnable: true}}, 0},
		{"serves redis, blank line between", "<!-- runnable: serves, redis -->\n\n```sh\nx\n```", []Mark{{Runnable: true, Serves: true, Redis: true}}, 0},
		{"not runnable with reason", "<!-- not runnable: needs a token -->\n```bash\ncurl\n```", []Mark{{Why: "needs a token"}}, 0},
		{"not runnable without reason", "<!-- not runnable -->\n```sh\nx\n```", []Mark{{}}, 1},
		{"unmarked", "Run:\n```sh\nx\n```", []Mark{{}}, 1},
		{"unknown option", "<!-- runnable: quickly -->\n```sh\nx\n```", []Mark{{}}, 1},
		{"redis without serves", "<!-- runnable: redis -->\n```sh\nx\n```", []Mark{{}}, 1},
		{"yaml is not a shell snippet", "```yaml\na: 1\n```", nil, 0},
		{"a marker applies to the next block only", "<!-- runnable -->\n```sh\na\n```\n```sh\nb\n```", []Mark{{Runnable: true}, {}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := Snippets("f.md", tc.text)
			var marks []Mark
			for _, s := range got {
				marks = append(marks, s.Mark)
			}
			if !reflect.DeepEqual(marks, tc.want) || len(errs) != tc.errs {
				t.Errorf("marks %+v errs %v; want %+v and %d errors", marks, errs, tc.want, tc.errs)
			}
		})
	}
}

func TestSnippetBodyAndLine(t *testing.T) {
	got, _ := Snippets("f.md", "# t\n\n<!-- runnable -->\n```sh\nmake build\nbin/keydeck --help\n```\n")
	if len(got) != 1 || got[0].Line != 4 || got[0].Body != "make build\nbin/keydeck --help" {
		t.Fatalf("got %+v", got)
	}
}

func TestRewrite(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"go run ./cmd/web            # then open http://127.0.0.1:8080",
			"go run ./cmd/web --addr 127.0.0.1:5555            # then open http://127.0.0.1:5555"},
		{"bin/keydeck --addr 127.0.0.1:8080 --redis main=redis://127.0.0.1:6379",
			"bin/keydeck --addr 127.0.0.1:5555 --redis main=redis://127.0.0.1:7777"},
		{"echo x | bin/keydeck hash-password", "echo x | bin/keydeck hash-password"},
	} {
		if got := Rewrite(tc.in, "127.0.0.1:5555", "127.0.0.1:7777"); got != tc.want {
			t.Errorf("Rewrite(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestSlugAndAnchors(t *testing.T) {
	for h, want := range map[string]string{
		"Sign-in and roles":                             "sign-in-and-roles",
		"The API (`/api/v1`)":                           "the-api-apiv1",
		"A key's raw value":                             "a-keys-raw-value",
		"Actions: previewed, atomic, audited, undoable": "actions-previewed-atomic-audited-undoable",
		"Rate limits (`make bench-limits`), 2026-12-01": "rate-limits-make-bench-limits-2026-12-01",
	} {
		if got := Slug(h); got != want {
			t.Errorf("Slug(%q) = %q, want %q", h, got, want)
		}
	}
	a := Anchors("# A\n## B\n```sh\n# not a heading\n```\n## B\n")
	if !reflect.DeepEqual(a, map[string]bool{"a": true, "b": true, "b-1": true}) {
		t.Errorf("Anchors = %v", a)
	}
}

func TestLinks(t *testing.T) {
	text := "See [c](configuration.md#the-users-file) and [x](https://x.org/a.md).\n" +
		"```sh\n[not](a-link.md)\n```\n" +
		`<picture><source srcset="img/o-dark.png"><img alt="o" src="img/o-light.png"></picture>` + "\n[top](#top)\n"
	want := []Link{
		{Line: 1, Target: "configuration.md", Anchor: "the-users-file"},
		{Line: 5, Target: "img/o-dark.png"},
		{Line: 5, Target: "img/o-light.png"},
		{Line: 6, Anchor: "top"},
	}
	if got := Links(text); !reflect.DeepEqual(got, want) {
		t.Errorf("Links =\n%+v\nwant\n%+v", got, want)
	}
}

func TestGluedTables(t *testing.T) {
	text := strings.Join([]string{"| a |", "|---|", "| 1 |", "Then a paragraph.", "", "| b |", "", "ok"}, "\n")
	if got := GluedTables(text); !reflect.DeepEqual(got, []int{4}) {
		t.Errorf("GluedTables = %v, want [4]", got)
	}
}
