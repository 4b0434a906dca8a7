package e2e

import (
	"archive/zip"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

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

// rehearsals holds the releases rehearsed so far, by version and platforms,
// each built once for the whole package: a rehearsal is most of an install
// test's time.
var rehearsals = struct {
	sync.Mutex
	api  *httptest.Server
	rels map[string]registry.Release
	dirs []string
}{rels: map[string]registry.Release{}}

// cleanupRehearsals stops the stand-in the rehearsals point at and removes
// their folders; TestMain calls it.
func cleanupRehearsals() {
	if rehearsals.api != nil {
		rehearsals.api.Close()
	}
	for _, dir := range rehearsals.dirs {
		os.RemoveAll(dir)
	}
}

// installAPI is the stand-in every rehearsal has built in as both
// environments' base address.
func installAPI() string {
	rehearsals.Lock()
	defer rehearsals.Unlock()
	if rehearsals.api == nil {
		rehearsals.api = httptest.NewServer(standin.New(standin.Options{Environments: standin.DemoEnvironments()}))
	}
	return rehearsals.api.URL
}

// otherPlatform is a platform releases are built for that is not this
// machine's: what a teammate on another system installs.
func otherPlatform() string {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		return "linux_amd64"
	}
	return "darwin_arm64"
}

// rehearse builds, signs and verifies release version for the platforms
// given ("host" is this machine's), with the stand-in installAPI serves as
// both environments' base address.
func rehearse(t *testing.T, version string, platforms ...string) registry.Release {
	t.Helper()
	api := installAPI()
	key := version + " " + strings.Join(platforms, ",")
	rehearsals.Lock()
	defer rehearsals.Unlock()
	if rel, ok := rehearsals.rels[key]; ok {
		return rel
	}
	dir, err := os.MkdirTemp("", "browserprofile-rehearsal-") //nolint:usetesting // shared by the package's tests; TestMain removes it
	if err != nil {
		t.Fatal(err)
	}
	rehearsals.dirs = append(rehearsals.dirs, dir)
	cmd := exec.Command(rehearsalScript, "--platforms", strings.Join(platforms, ","), version, dir)
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
	rehearsals.rels[key] = rel
	return rel
}

// archiveHash is the SHA256SUMS line of platform's archive ("linux_amd64").
func archiveHash(t *testing.T, rel registry.Release, platform string) string {
	t.Helper()
	sums := readFile(t, filepath.Join(rel.Dir, "terraform-provider-browserprofile_"+rel.Version+"_SHA256SUMS"))
	suffix := fmt.Sprintf("_%s_%s.zip", rel.Version, platform)
	for line := range strings.Lines(sums) {
		if hash, name, ok := strings.Cut(strings.TrimSpace(line), "  "); ok && strings.HasSuffix(name, suffix) {
			return hash
		}
	}
	t.Fatalf("SHA256SUMS lists no archive for %s:\n%s", platform, sums)
	return ""
}

// serveRegistry starts a registry with the releases given.
func serveRegistry(t *testing.T, rels ...registry.Release) (*registry.Registry, *httptest.Server) {
	t.Helper()
	reg := registry.New("browserprofile", "browserprofile")
	for _, rel := range rels {
		if err := reg.Publish(rel); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	return reg, srv
}

// installWorkspace is a configuration that needs the provider at 0.1.0 or
// later and gives it only api_token, for the CLI bin with the CLI
// configuration given (registry.CLIConfig sends both public registries'
// hosts to a registry on loopback).
func installWorkspace(t *testing.T, bin, cliConfig string) *workspace {
	t.Helper()
	return makeWorkspace(t, bin, cliConfig, fmt.Sprintf(`terraform {
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
	first, second := rehearse(t, "0.1.0", "host", otherPlatform()), rehearse(t, "0.2.0", "host")

	for _, bin := range clis {
		name := cliName(t, bin)
		t.Run(name, func(t *testing.T) {
			reg, srv := serveRegistry(t, first)
			w := installWorkspace(t, bin, registry.CLIConfig(srv.URL))
			if strings.HasPrefix(name, "OpenTofu") {
				// As the guide advises: no install without a signature
				// checked, and none by an expired key.
				w.env = append(w.env, "OPENTOFU_ENFORCE_GPG_VALIDATION=true", "OPENTOFU_ENFORCE_GPG_EXPIRATION=true")
			}

			out := mustRun(t, w, "init", "-input=false", "-no-color")
			for _, want := range []string{"Installed browserprofile/browserprofile v0.1.0 (", "signed"} {
				if !strings.Contains(out, want) {
					t.Errorf("init says nothing of %q:\n%s", want, out)
				}
			}
			checkLock(t, w, first)

			checkPlanReadsTheStandin(t, w)

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
	rel := rehearse(t, "0.1.0", "host", otherPlatform())
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
		_, srv := serveRegistry(t, changed)
		for _, bin := range clis {
			t.Run(tc.name+"/"+cliName(t, bin), func(t *testing.T) {
				w := installWorkspace(t, bin, registry.CLIConfig(srv.URL))
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

// What a team on several systems and a site without internet do: a lock
// file with every platform's hashes (providers lock), and a mirror folder
// (providers mirror) that init installs from with the registry gone.
func TestInstall_locksEveryPlatformAndInstallsFromAMirror(t *testing.T) {
	clis := installCLIs(t)
	rel := rehearse(t, "0.1.0", "host", otherPlatform())
	platforms := []string{runtime.GOOS + "_" + runtime.GOARCH, otherPlatform()}
	var platformArgs []string
	for _, p := range platforms {
		platformArgs = append(platformArgs, "-platform="+p)
	}

	for _, bin := range clis {
		t.Run(cliName(t, bin), func(t *testing.T) {
			_, srv := serveRegistry(t, rel)
			w := installWorkspace(t, bin, registry.CLIConfig(srv.URL))

			mustRun(t, w, append([]string{"providers", "lock"}, platformArgs...)...)
			lock := readFile(t, filepath.Join(w.dir, ".terraform.lock.hcl"))
			for _, p := range platforms {
				if want := `"` + packageHash(t, rel, p) + `"`; !strings.Contains(lock, want) {
					t.Errorf("providers lock wrote no h1: hash for %s (%s):\n%s", p, want, lock)
				}
				if want := `"zh:` + archiveHash(t, rel, p) + `"`; !strings.Contains(lock, want) {
					t.Errorf("providers lock wrote no zh: hash for %s:\n%s", p, lock)
				}
			}

			mirror := t.TempDir()
			mustRun(t, w, append(append([]string{"providers", "mirror"}, platformArgs...), mirror)...)
			for _, p := range platforms {
				if m, _ := filepath.Glob(filepath.Join(mirror, "*", "browserprofile", "browserprofile", "terraform-provider-browserprofile_0.1.0_"+p+".zip")); len(m) != 1 {
					t.Errorf("providers mirror wrote no archive for %s", p)
				}
			}

			// The registry is gone; only the mirror is configured: as a
			// folder, and served over HTTPS as a network mirror.
			srv.Close()
			checkInstallsFrom(t, rel, installWorkspace(t, bin, fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)))
			https := httptest.NewTLSServer(http.FileServer(http.Dir(mirror)))
			defer https.Close()
			ca := filepath.Join(t.TempDir(), "ca.pem")
			writeFile(t, ca, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: https.Certificate().Raw})))
			network := installWorkspace(t, bin, fmt.Sprintf("provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n", https.URL+"/"))
			network.env = append(network.env, "SSL_CERT_FILE="+ca)
			checkInstallsFrom(t, rel, network)

			// Parallel runs share a plugin cache that one init filled first.
			cache := t.TempDir()
			mirrored := fmt.Sprintf("plugin_cache_dir = %q\nprovider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", cache, mirror)
			mustRun(t, installWorkspace(t, bin, mirrored), "init", "-input=false", "-no-color")
			var wg sync.WaitGroup
			for range 3 {
				w := installWorkspace(t, bin, mirrored)
				wg.Go(func() {
					if out, err := w.run(nil, "init", "-input=false", "-no-color"); err != nil {
						t.Errorf("init beside two others, sharing the plugin cache: %v\n%s", err, out)
					}
				})
			}
			wg.Wait()
		})
	}
}

// checkInstallsFrom inits w, whose CLI configuration names a mirror of rel,
// and plans: init installs rel and locks its hash for this machine.
func checkInstallsFrom(t *testing.T, rel registry.Release, w *workspace) {
	t.Helper()
	out := mustRun(t, w, "init", "-input=false", "-no-color")
	if want := "Installed browserprofile/browserprofile v" + rel.Version; !strings.Contains(out, want) {
		t.Errorf("init from a mirror says nothing of %q:\n%s", want, out)
	}
	if want := packageHash(t, rel, runtime.GOOS+"_"+runtime.GOARCH); !strings.Contains(readFile(t, filepath.Join(w.dir, ".terraform.lock.hcl")), want) {
		t.Errorf("init from a mirror locked no %s", want)
	}
	checkPlanReadsTheStandin(t, w)
}

// Every archive carries the licence, byte for byte the repository's.
func TestInstall_archivesCarryTheLicence(t *testing.T) {
	installCLIs(t)
	rel := rehearse(t, "0.1.0", "host", otherPlatform())
	licence := readFile(t, "../../LICENSE")
	zips, err := filepath.Glob(filepath.Join(rel.Dir, "*.zip"))
	if err != nil || len(zips) == 0 {
		t.Fatalf("the rehearsal holds no zip: %v", err)
	}
	for _, name := range zips {
		z, err := zip.OpenReader(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := z.Open("LICENSE")
		if err != nil {
			t.Errorf("%s holds no LICENSE: %v", filepath.Base(name), err)
		} else if b, err := io.ReadAll(f); err != nil || string(b) != licence {
			t.Errorf("%s holds a LICENSE that is not the repository's (%v)", filepath.Base(name), err)
		}
		z.Close()
	}
}

// A release is not built without both base addresses: goreleaser's first
// hook refuses, naming the variable, before any build starts.
func TestInstall_noReleaseWithoutBothBaseAddresses(t *testing.T) {
	installCLIs(t)
	for _, unset := range []string{"BROWSERPROFILE_PRODUCTION_BASE_URL", "BROWSERPROFILE_DEVELOPMENT_BASE_URL"} {
		t.Run(unset, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(rehearsalScript, "--platforms", "host", "0.1.0", dir)
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
		`"zh:` + archiveHash(t, rel, runtime.GOOS+"_"+runtime.GOARCH) + `"`, `"h1:`,
	} {
		if !strings.Contains(lock, want) {
			t.Errorf("the lock file has no %s:\n%s", want, lock)
		}
	}
}

// packageHash is the h1: hash (a hash of the files inside, as the lock
// file records it) of platform's archive.
func packageHash(t *testing.T, rel registry.Release, platform string) string {
	t.Helper()
	h, err := dirhash.HashZip(filepath.Join(rel.Dir, fmt.Sprintf("terraform-provider-browserprofile_%s_%s.zip", rel.Version, platform)), dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkPlanReadsTheStandin plans the installWorkspace configuration, whose
// provider block gives only api_token: the built-in base address is the
// stand-in's.
func checkPlanReadsTheStandin(t *testing.T, w *workspace) {
	t.Helper()
	out := mustRun(t, w, "plan", "-input=false", "-no-color")
	if want := fmt.Sprintf("profile_count = %d", len(standin.DemoEnvironments()[0].Profiles)); !strings.Contains(out, want) {
		t.Errorf("plan with the built-in base address shows no %q:\n%s", want, out)
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
// "Terraform v1.5.7", "OpenTofu v1.12.6".
func cliName(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	// The version line, past any warning about the CLI configuration.
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "Terraform v") || strings.HasPrefix(line, "OpenTofu v") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("%s version says no version:\n%s", bin, out)
	return ""
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
