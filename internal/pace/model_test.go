package pace

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestModel_onlyTheTransitionAssignsIt: a field of the model is assigned
// only by a method of model (next and what it calls), or by the decoder,
// which builds a state whole. The Pacer reads the model, replaces it whole
// (a load, a copy, a fresh start), and steps it through next.
func TestModel_onlyTheTransitionAssignsIt(t *testing.T) {
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*.go")
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("pace", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	modelType := pkg.Scope().Lookup("model").Type()
	// The share's bookkeeping, kept in the state but no part of the pace.
	allowed := []string{"checked"}
	isModelField := func(e ast.Expr) (string, bool) {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		s := info.Selections[sel]
		if s == nil || s.Kind() != types.FieldVal {
			return "", false
		}
		// The field's own struct is model's: its first index in the
		// path from the receiver names a field of model.
		recv := s.Recv()
		if p, ok := recv.(*types.Pointer); ok {
			recv = p.Elem()
		}
		path := s.Index()
		if types.Identical(recv, modelType) && len(path) == 1 {
			return sel.Sel.Name, true
		}
		if st, ok := recv.Underlying().(*types.Struct); ok && len(path) == 2 && types.Identical(st.Field(path[0]).Type(), modelType) {
			return sel.Sel.Name, true // the Pacer's embedded model
		}
		return "", false
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Name.Name == "decodeState" {
				continue
			}
			if fn.Recv != nil && strings.TrimPrefix(types.ExprString(fn.Recv.List[0].Type), "*") == "model" {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				var lhs []ast.Expr
				switch n := n.(type) {
				case *ast.AssignStmt:
					lhs = n.Lhs
				case *ast.IncDecStmt:
					lhs = []ast.Expr{n.X}
				case *ast.UnaryExpr:
					if n.Op == token.AND {
						lhs = []ast.Expr{n.X}
					}
				}
				for _, e := range lhs {
					if name, ok := isModelField(e); ok && !slices.Contains(allowed, name) {
						t.Errorf("%s: %s assigns the model's %s outside its transition", fset.Position(e.Pos()), fn.Name.Name, name)
					}
				}
				return true
			})
		}
	}
}
