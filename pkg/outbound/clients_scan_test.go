package outbound

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ownClientAllowed lists the packages that may build their own HTTP
// clients, each with the reason. Everything else that sends a request to a
// URL must use NewClient, because the URL may be a tenant's.
var ownClientAllowed = map[string]string{
	"pkg/outbound":      "this is the factory",
	"pkg/llm/openai":    "its default client talks to the operator-configured LLM endpoint, through go-retryablehttp; a tenant's provider is given the outbound client (Config.HTTPClient)",
	"pkg/llm/anthropic": "its default client talks to the operator-configured Anthropic endpoint; a tenant's provider is given the outbound client (Config.HTTPClient)",
	"pkg/api/apiclient": "the Go client of Parley's own API; its caller picks the server, a tenant never does",
	"pkg/httpretry":     "wraps the *http.Client its caller passes (outbound's, for tenant URLs) in retries, over that client's own transport",
}

// forbiddenHTTP lists, per import path, the names whose mere use bypasses
// the outbound policy (default clients, package-level helpers).
var forbiddenHTTP = map[string][]string{
	"net/http":                              {"DefaultClient", "DefaultTransport", "Get", "Head", "Post", "PostForm"},
	"github.com/hashicorp/go-cleanhttp":     {"DefaultClient", "DefaultPooledClient", "DefaultTransport", "DefaultPooledTransport"},
	"github.com/hashicorp/go-retryablehttp": {"NewClient", "Get", "Head", "Post", "PostForm"},
}

// forbiddenTypes lists the types that must not be constructed (a literal or
// new(T)) outside the allowed packages; taking a *http.Client as a parameter
// is how the outbound client gets passed around, so plain use is fine.
var forbiddenTypes = map[string][]string{
	"net/http":                              {"Client", "Transport"},
	"github.com/hashicorp/go-retryablehttp": {"Client"},
}

func TestNoOtherPackageBuildsItsOwnHTTPClient(t *testing.T) {
	root := filepath.Join("..", "..")
	var findings []string
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if _, ok := ownClientAllowed[filepath.ToSlash(rel)]; ok {
			return nil
		}
		found, err := scanFile(path)
		if err != nil {
			return err
		}
		findings = append(findings, found...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("%s: use outbound.NewClient (or add the package to ownClientAllowed with the reason it never fetches a tenant URL)", f)
	}
}

func TestClientScanFindsEveryBypass(t *testing.T) {
	src := `package x
import (
	"net/http"
	web "net/http"
	rh "github.com/hashicorp/go-retryablehttp"
)
var a = &http.Client{}
var b = http.Transport{}
var c = new(web.Client)
var d = http.DefaultClient
func f() {
	http.Get("http://example.com")
	web.Post("u", "t", nil)
	_ = http.DefaultTransport.(*http.Transport).Clone() // one finding: the assertion builds nothing
	_ = rh.NewClient()
	_ = http.NewRequest // fine: only building a request
}
func g(c *http.Client) *http.Client { return c } // fine: passing the outbound client around
`
	dir := t.TempDir()
	path := filepath.Join(dir, "x.go")
	if err := writeFile(path, src); err != nil {
		t.Fatal(err)
	}
	found, err := scanFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found {
		names = append(names, f[strings.LastIndex(f, " ")+1:])
	}
	want := []string{"http.Client", "http.Transport", "http.Client", "http.DefaultClient", "http.Get", "http.Post", "http.DefaultTransport", "retryablehttp.NewClient"}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("found %v, want %v", names, want)
	}
}

// scanFile returns "file:line: uses pkg.Name" for every forbidden selector.
func scanFile(path string) ([]string, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := map[string]string{} // local import name -> import path
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		_, watched := forbiddenHTTP[p]
		if _, constructed := forbiddenTypes[p]; !watched && !constructed {
			continue
		}
		name := strings.TrimPrefix(p[strings.LastIndex(p, "/")+1:], "go-")
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = p
	}
	var found []string
	report := func(sel *ast.SelectorExpr, p string) {
		short := strings.TrimPrefix(p[strings.LastIndex(p, "/")+1:], "go-")
		found = append(found, fset.Position(sel.Pos()).String()+": uses "+short+"."+sel.Sel.Name)
	}
	// match returns the import path when e is pkg.Name with Name in list.
	match := func(e ast.Expr, lists map[string][]string) (*ast.SelectorExpr, string) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return nil, ""
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return nil, ""
		}
		p, ok := local[pkg.Name]
		if !ok || !slices.Contains(lists[p], sel.Sel.Name) {
			return nil, ""
		}
		return sel, p
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if sel, p := match(n.Type, forbiddenTypes); sel != nil {
				report(sel, p)
			}
		case *ast.CallExpr:
			if fn, ok := n.Fun.(*ast.Ident); ok && fn.Name == "new" && len(n.Args) == 1 {
				if sel, p := match(n.Args[0], forbiddenTypes); sel != nil {
					report(sel, p)
				}
			}
		case *ast.SelectorExpr:
			if sel, p := match(n, forbiddenHTTP); sel != nil {
				report(sel, p)
			}
		}
		return true
	})
	return found, nil
}
