package benchdoc

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Area is one part of BENCHMARKS.md and the recording it is read from.
type Area struct {
	Name    string // benchmarks/Name.txt, and make bench-record's AREAS
	Title   string
	Command string // what make bench-record runs for it
	// Programs are the commands it builds and runs, and Tests the packages
	// whose tests it runs (with their tests' imports): the non-test Go
	// files of every package of this module they link are what it
	// measures.
	Programs, Tests []string
	// Harness are the files that define its measurements, and the pin of
	// the Terraform it runs (pathspecs).
	Harness []string
	Tables  func(*Record) ([]*Table, error)
}

// Areas are BENCHMARKS.md's areas, in its order.
var Areas = []Area{
	{
		Name: "limiters", Title: "One plan behind real limiters", Command: "make bench-limiters",
		Programs: []string{"."}, Tests: []string{"./internal/e2e"},
		Harness: []string{"scripts/bench-limiters.sh", "scripts/ensure-terraform.sh", "internal/e2e/limiters_test.go", "internal/e2e/e2e_test.go", "internal/e2e/fleet_test.go"},
		Tables:  limitersTables,
	},
	{
		Name: "bench", Title: "The list at scale, the stand-in's limiters and fleets", Command: "make bench",
		Programs: []string{".", "./cmd/standin", "./cmd/benchfloor"},
		Tests:    []string{"./internal/client", "./internal/listing", "./internal/provider", "./internal/e2e"},
		Harness: []string{"scripts/bench.sh", "scripts/bench-fleet.sh", "scripts/lib.sh", "scripts/ensure-terraform.sh", "internal/e2e/fleet_test.go", "internal/e2e/e2e_test.go",
			"internal/client/pacing_bench_test.go", "internal/client/profilekey_test.go", "internal/client/tally_test.go",
			"internal/listing/decode_test.go", "internal/provider/bench_test.go"},
		Tables: benchTables,
	},
	{
		Name: "scale", Title: "The Redis store at scale", Command: "PACE_SCALE=1 PACE_SCALE_RUNS=3 go test -run TestScale_membersThroughOneRedis ./internal/paceredis/",
		Tests:   []string{"./internal/paceredis"},
		Harness: []string{"internal/paceredis/scale_test.go"},
		Tables:  scaleTables,
	},
	{
		Name: "schedule", Title: "The shared schedule at scale", Command: "PACE_SCALE=1 PACE_SCALE_RUNS=3 go test -run TestScale_takers ./internal/schedule/",
		Tests:   []string{"./internal/schedule"},
		Harness: []string{"internal/schedule/scale_test.go"},
		Tables:  scheduleTables,
	},
	{
		Name: "simulation", Title: "The pace in virtual time", Command: "go test -v -run TestPacer_ ./internal/pace/, and PACE_BASELINE=1's tables",
		Tests:   []string{"./internal/pace"},
		Harness: []string{":(glob)internal/pace/*_test.go"},
		Tables:  simulationTables,
	},
}

// Stale lists the files area measures that changed between the record's
// commit and HEAD in the repository at root; none when the record speaks
// for the head. A Go file whose comments alone changed is not among them
// (sameCode).
func Stale(root string, a Area, r *Record) ([]string, error) {
	git := func(args ...string) (string, error) { return output(root, "git", args...) }
	if _, err := git("merge-base", "--is-ancestor", r.Commit, "HEAD"); err != nil {
		return nil, fmt.Errorf("benchmarks/%s.txt measured %.12s, which is not in HEAD's history: record it again (%v)", a.Name, r.Commit, err)
	}
	dirs, err := measuredDirs(root, a.Programs, false)
	if err != nil {
		return nil, err
	}
	tested, err := measuredDirs(root, a.Tests, true)
	if err != nil {
		return nil, err
	}
	dirs = append(dirs, tested...)
	code := []string{"go.mod", "go.sum", ":(exclude,glob)**/*_test.go"}
	for _, d := range dirs {
		code = append(code, ":(glob)"+filepath.ToSlash(filepath.Join(d, "*.go")))
	}
	var changed []string
	for _, paths := range [][]string{code, a.Harness} {
		out, err := git(append([]string{"diff", "--name-only", r.Commit, "HEAD", "--"}, paths...)...)
		if err != nil {
			return nil, err
		}
		for _, f := range strings.Fields(out) {
			if !strings.HasSuffix(f, ".go") || !sameCode(gitShow(root, r.Commit, f), gitShow(root, "HEAD", f)) {
				changed = append(changed, f)
			}
		}
	}
	slices.Sort(changed)
	return slices.Compact(changed), nil
}

// gitShow is the file path at rev in the repository at root; nil where it
// has none, which no other version's code is the same as.
func gitShow(root, rev, path string) []byte {
	out, err := output(root, "git", "show", rev+":"+path)
	if err != nil {
		return nil
	}
	return []byte(out)
}

// measuredDirs are the directories, relative to root, of this module's
// packages that pkgs link, and with tests, that their tests link.
func measuredDirs(root string, pkgs []string, tests bool) ([]string, error) {
	if len(pkgs) == 0 {
		return nil, nil
	}
	args := []string{"list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}"}
	if tests {
		args = append(args, "-test")
	}
	out, err := output(root, "go", append(args, pkgs...)...)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, d := range strings.Fields(out) {
		if rel, err := filepath.Rel(abs, d); err == nil && !strings.HasPrefix(rel, "..") {
			dirs = append(dirs, rel)
		}
	}
	slices.Sort(dirs)
	return slices.Compact(dirs), nil
}

// output is what the command name with args prints in the directory dir;
// its error carries what the command said on standard error.
func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
	}
	return string(out), err
}
