package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The project's packages import each other in one direction only, as
// ARCHITECTURE.md states: each package may import the project packages
// listed here and no other (its tests aside).
var mayImport = map[string][]string{
	".":                    {"internal/provider"},
	"internal/provider":    {"internal/client", "internal/listing", "internal/records"},
	"internal/client":      {"internal/listing", "internal/loopback", "internal/pace", "internal/paceredis", "internal/paceshare", "internal/reason", "internal/records", "internal/redact"},
	"internal/reason":      {"internal/redact"},
	"internal/paceshare":   {"internal/pace"},
	"internal/paceredis":   {"internal/pace"},
	"internal/listing":     {"internal/jsonscan", "internal/records", "internal/redact"},
	"internal/records":     {"internal/jsonscan"},
	"internal/jsonscan":    nil,
	"internal/redact":      nil,
	"internal/loopback":    nil,
	"internal/pace":        nil,
	"internal/schedule":    nil,
	"internal/ratelimit":   nil,
	"internal/standin":     {"internal/ratelimit"},
	"cmd/standin":          {"internal/loopback", "internal/standin"},
	"internal/registry":    nil,
	"cmd/registry":         {"internal/loopback", "internal/registry"},
	"internal/e2e":         nil,
	"internal/daemons":     nil,
	"internal/releasetest": nil,
	"cmd/benchfloor":       nil,
	"internal/benchdoc":    nil,
	"cmd/benchdoc":         {"internal/benchdoc"},
}

func TestArchitecture_importsGoOneWay(t *testing.T) {
	const module = "github.com/browserprofile/terraform-provider-browserprofile"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" {
			pkg = "."
		}
		allowed, known := mayImport[pkg]
		if !known {
			t.Errorf("package %s is not in mayImport: say in ARCHITECTURE.md and here what it may import", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if dep, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s, which ARCHITECTURE.md does not allow it", pkg, dep)
			}
		}
	}
}

// maxFuncLines is the longest a function may be, closures included, so that
// each does one job its name says; schema declarations (Schema, and helpers
// named for the schema or attributes they declare) are data, not steps.
const maxFuncLines = 80

// maxFileLines is the longest a source file may be: a file that grows past
// it holds more than one job (tests are not counted).
const maxFileLines = 450

func TestArchitecture_filesAndFunctionsAreShort(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "tools" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if n := fset.Position(f.FileEnd).Line; n > maxFileLines {
			t.Errorf("%s is %d lines, over %d: one file per job", path, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Name.Name == "Schema" || strings.HasSuffix(fn.Name.Name, "Schema") || strings.HasSuffix(fn.Name.Name, "Attributes") {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it into steps that each do one job", path, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// maxDesignWords keeps ARCHITECTURE.md a design read at one sitting, half
// what it was when it also held the figures: tables that change at every
// run belong in BENCHMARKS.md.
const maxDesignWords = 3900

func TestArchitecture_designIsApartFromFigures(t *testing.T) {
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(b))); n > maxDesignWords {
		t.Errorf("ARCHITECTURE.md is %d words, over %d: move measured tables to BENCHMARKS.md, rules to the package docs", n, maxDesignWords)
	}
}
