package e2e

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/registry"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// The install tests take the path users take: a release built by the
// project's own goreleaser configuration (scripts/release-rehearsal.sh, this
// machine's platform only) and signed with a throwaway key, served by a
// provider registry on loopback that the CLI configuration's host blocks
// put in place of registry.terraform.io and registry.opentofu.org. No
// dev_overrides: init installs, checks the signature and writes the lock
// file, and a block with only api_token reaches the built-in base address.
//
// They run with each CLI BROWSERPROFILE_INSTALL_CLIS names (make
// install-test), since each checks signatures with code of its own.

const rehearsalScript = "../../scripts/release-rehearsal.sh"

// installCLIs is the CLIs to install with, or a skip.
func installCLIs(t *testing.T) []string {
	clis := strings.Fields(os.Getenv("BROWSERPROFILE_INSTALL_CLIS"))
	if len(clis) == 0 {
		t.Skip("set BROWSERPROFILE_INSTALL_CLIS to the terraform and tofu binaries to install with (make install-test)")
	}
	return clis
}

// rehearse builds, signs and verifies release version with the stand-in at
// api built in as both environments' base address.
func rehearse(t *testing.T, version, api string) registry.Release {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(rehearsalScript, "--host-only", version, dir)
	cmd.Env = append(os.Environ(),
		"BROWSERPROFILE_PRODUCTION_BASE_URL="+api+"/production/api/v1",
		"BROWSERPROFILE_DEVELOPMENT_BASE_URL="+api+"/development/api/v1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release rehearsal of %s: %v\n%s", version, err, out)
	}
	rel, err := registry.ReadRehearsal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != version {
		t.Fatalf("the rehearsal of %s wrote version %s", version, rel.Version)
	}
	return rel
}

// hostArchiveHash is the SHA256SUMS line of this machine's archive.
func hostArchiveHash(t *testing.T, rel registry.Release) string {
	t.Helper()
	sums := readFile(t, filepath.Join(rel.Dir, "terraform-provider-browserprofile_"+rel.Version+"_SHA256SUMS"))
	suffix := fmt.Sprintf("_%s_%s_%s.zip", rel.Version, runtime.GOOS, runtime.GOARCH)
	for line := range strings.Lines(sums) {
		if hash, name, ok := strings.Cut(strings.TrimSpace(line), "  "); ok && strings.HasSuffix(name, suffix) {
			return hash
		}
	}
	t.Fatalf("SHA256SUMS lists no archive for %s_%s:\n%s", runtime.GOOS, runtime.GOARCH, sums)
	return ""
}

// serveRegistry starts a registry with the releases given.
func serveRegistry(t *testing.T, rels ...registry.Release) (*registry.Registry, string) {
	t.Helper()
	reg := registry.New("browserprofile", "browserprofile")
	for _, rel := range rels {
		if err := reg.Publish(rel); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	return reg, srv.URL
}

// installWorkspace is a configuration that needs the provider at 0.1.0 or
// later and gives it only api_token, for the CLI bin, whose CLI
// configuration sends both public registries' hosts to the registry at url.
func installWorkspace(t *testing.T, bin, url string) *workspace {
	t.Helper()
	return makeWorkspace(t, bin, registry.CLIConfig(url), fmt.Sprintf(`terraform {
  required_providers {
    browserprofile = {
      source  = "browserprofile/browserprofile"
      version = ">= 0.1.0"
    }
  }
}

provider "browserprofile" {
  api_token = %q
}

data "browserprofile_profiles" "all" {}

output "profile_count" {
  value = length(data.browserprofile_profiles.all.profile_keys)
}
`, standin.DemoProductionToken))
}

func TestInstall_fromARegistryWithTheLockFile(t *testing.T) {
	clis := installCLIs(t)
	api := httptest.NewServer(standin.New(standin.Options{Environments: standin.DemoEnvironments()}))
	defer api.Close()
	first, second := rehearse(t, "0.1.0", api.URL), rehearse(t, "0.2.0", api.URL)
	production := len(standin.DemoEnvironments()[0].Profiles)

	for _, bin := range clis {
		t.Run(cliName(t, bin), func(t *testing.T) {
			reg, url := serveRegistry(t, first)
			w := installWorkspace(t, bin, url)

			out := mustRun(t, w, "init", "-input=false", "-no-color")
			for _, want := range []string{"Installed browserprofile/browserprofile v0.1.0 (", "signed"} {
				if !strings.Contains(out, want) {
					t.Errorf("init says nothing of %q:\n%s", want, out)
				}
			}
			checkLock(t, w, first)

			out = mustRun(t, w, "plan", "-input=false", "-no-color")
			if want := fmt.Sprintf("profile_count = %d", production); !strings.Contains(out, want) {
				t.Errorf("plan with the built-in base address shows no %q:\n%s", want, out)
			}

			if err := reg.Publish(second); err != nil {
				t.Fatal(err)
			}
			out = mustRun(t, w, "init", "-upgrade", "-input=false", "-no-color")
			if want := "Installed browserprofile/browserprofile v0.2.0 ("; !strings.Contains(out, want) {
				t.Errorf("init -upgrade says nothing of %q:\n%s", want, out)
			}
			checkLock(t, w, second)
		})
	}
}

// What the signature does not cover is refused by init: an archive whose
// bytes are not the ones SHA256SUMS lists (a corrupted download, a tampered
// mirror), and a SHA256SUMS changed after signing (as goreleaser 2.15.0 and
// 2.15.1 changed it, adding the signature's own line).
func TestInstall_refusesWhatTheSignatureDoesNotCover(t *testing.T) {
	clis := installCLIs(t)
	rel := rehearse(t, "0.1.0", "http://127.0.0.1:9")
	sums := "terraform-provider-browserprofile_0.1.0_SHA256SUMS"
	for _, tc := range []struct {
		name, want string
		change     func(name string, b []byte) []byte
	}{
		{"archive", "checksum", func(name string, b []byte) []byte {
			if strings.HasSuffix(name, ".zip") {
				b = append(b, '\n') // still a zip: its directory is found from the end
			}
			return b
		}},
		{"SHA256SUMS", "signature", func(name string, b []byte) []byte {
			if name == sums {
				b = append(b, "0000000000000000000000000000000000000000000000000000000000000000  "+sums+".sig\n"...)
			}
			return b
		}},
	} {
		changed := rel
		changed.Dir = t.TempDir()
		entries, err := os.ReadDir(rel.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(rel.Dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(changed.Dir, e.Name()), string(tc.change(e.Name(), b)))
		}
		_, url := serveRegistry(t, changed)
		for _, bin := range clis {
			t.Run(tc.name+"/"+cliName(t, bin), func(t *testing.T) {
				w := installWorkspace(t, bin, url)
				out, err := w.run(nil, "init", "-input=false", "-no-color")
				if err == nil || !strings.Contains(strings.ToLower(out), tc.want) {
					t.Errorf("init with a changed %s: err = %v, want a %s failure:\n%s", tc.name, err, tc.want, out)
				}
				if _, err := os.Stat(filepath.Join(w.dir, ".terraform.lock.hcl")); err == nil {
					t.Errorf("init with a changed %s wrote a lock file", tc.name)
				}
			})
		}
	}
}

// A release is not built without both base addresses: goreleaser's first
// hook refuses, naming the variable, before any build starts.
func TestInstall_noReleaseWithoutBothBaseAddresses(t *testing.T) {
	installCLIs(t)
	for _, unset := range []string{"BROWSERPROFILE_PRODUCTION_BASE_URL", "BROWSERPROFILE_DEVELOPMENT_BASE_URL"} {
		t.Run(unset, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(rehearsalScript, "--host-only", "0.1.0", dir)
			cmd.Env = append(os.Environ(),
				"BROWSERPROFILE_PRODUCTION_BASE_URL=https://api.example.com/api/v1",
				"BROWSERPROFILE_DEVELOPMENT_BASE_URL=https://dev.example.com/api/v1",
				unset+"=")
			out, err := cmd.CombinedOutput()
			if err == nil || !bytes.Contains(out, []byte("release refused: "+unset+" is unset or empty")) {
				t.Errorf("rehearsal with %s empty: err = %v, want the release refused naming it:\n%s", unset, err, out)
			}
			if bytes.Contains(out, []byte("building binaries")) {
				t.Errorf("goreleaser built before refusing:\n%s", out)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("a refused release left %d files", len(entries))
			}
		})
	}
}

// checkLock asserts that the lock file pins rel and records the hash
// SHA256SUMS gives this machine's archive (zh:) and the package's own (h1:).
func checkLock(t *testing.T, w *workspace, rel registry.Release) {
	t.Helper()
	lock := readFile(t, filepath.Join(w.dir, ".terraform.lock.hcl"))
	for _, want := range []string{
		`provider "registry.`, "/browserprofile/browserprofile\"",
		fmt.Sprintf("version     = %q", rel.Version),
		`"zh:` + hostArchiveHash(t, rel) + `"`, `"h1:`,
	} {
		if !strings.Contains(lock, want) {
			t.Errorf("the lock file has no %s:\n%s", want, lock)
		}
	}
}

func mustRun(t *testing.T, w *workspace, args ...string) string {
	t.Helper()
	out, err := w.run(nil, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(w.bin), strings.Join(args, " "), err, out)
	}
	return out
}

// cliName is the first line of bin's version, as a test name:
// "Terraform v1.5.7", "OpenTofu v1.10.7".
func cliName(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	name, _, _ := strings.Cut(string(out), "\n")
	return name
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
