// Package e2e runs the built provider through the terraform CLI, as a user
// does: a separate provider process for each provider block. It covers what
// the in-process acceptance tests cannot: for_each over profile keys,
// aliased provider blocks, warnings, and what TF_LOG=trace prints, with a
// CLI configuration whose dev_overrides skip terraform init; and, in
// install_test.go, a release installed by terraform init from a registry.
package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// pluginDir holds the provider built once for every test.
var pluginDir string

func TestMain(m *testing.M) {
	// Providers run by the install tests share their pace here, not in the
	// user's cache.
	paceDir, err := os.MkdirTemp("", "browserprofile-e2e-pace-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("BROWSERPROFILE_PACE_DIR", paceDir)
	if os.Getenv("TF_ACC") != "" {
		dir, err := os.MkdirTemp("", "browserprofile-e2e-")
		if err == nil {
			pluginDir = dir
			var out []byte
			out, err = exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-browserprofile"),
				"github.com/browserprofile/terraform-provider-browserprofile").CombinedOutput()
			if err != nil {
				err = fmt.Errorf("go build: %v\n%s", err, out)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	cleanupRehearsals()
	os.RemoveAll(paceDir)
	if pluginDir != "" {
		os.RemoveAll(pluginDir)
	}
	os.Exit(code)
}

// workspace is a directory holding main.tf, and how to run the CLI on it.
type workspace struct {
	dir string
	bin string   // terraform, or the CLI TF_ACC_TERRAFORM_PATH names
	env []string // the CLI's environment
}

// newWorkspace writes main.tf (with the required_providers block) and a CLI
// configuration whose dev_overrides point at the provider built by TestMain.
func newWorkspace(t testing.TB, mainTF string) *workspace {
	t.Helper()
	return workspaceWith(t, pluginDir, mainTF)
}

// workspaceWith is newWorkspace with the provider in plugins.
func workspaceWith(t testing.TB, plugins, mainTF string) *workspace {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run the end-to-end tests")
	}
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("terraform"); err != nil {
			t.Fatal("no terraform: put one on PATH or set TF_ACC_TERRAFORM_PATH (scripts/ensure-terraform.sh builds one)")
		}
	}
	// OpenTofu resolves the same source address on its own registry host.
	host := os.Getenv("TF_ACC_PROVIDER_HOST")
	if host == "" {
		host = "registry.terraform.io"
	}
	return makeWorkspace(t, bin, fmt.Sprintf(`provider_installation {
  dev_overrides {
    "%s/browserprofile/browserprofile" = %q
  }
  direct {}
}
`, host, plugins), `terraform {
  required_providers {
    browserprofile = { source = "browserprofile/browserprofile" }
  }
}
`+mainTF)
}

// makeWorkspace writes main.tf and the CLI configuration cliConfig to a new
// directory, for the CLI bin to run in an environment where nothing
// BROWSERPROFILE_* or TF_* leaks in.
func makeWorkspace(t testing.TB, bin, cliConfig, mainTF string) *workspace {
	t.Helper()
	w := &workspace{dir: t.TempDir(), bin: bin}
	rc := filepath.Join(w.dir, "terraformrc")
	writeFile(t, rc, cliConfig)
	writeFile(t, filepath.Join(w.dir, "main.tf"), mainTF)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BROWSERPROFILE_") && !strings.HasPrefix(kv, "TF_") {
			w.env = append(w.env, kv)
		}
	}
	// The provider shares its pace in the workspace, not the user's cache.
	w.env = append(w.env, "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"BROWSERPROFILE_PACE_DIR="+filepath.Join(w.dir, "pace"))
	return w
}

// run runs the CLI in the workspace, with extra environment variables (later
// ones win), and returns its combined output.
func (w *workspace) run(extraEnv []string, args ...string) (string, error) {
	cmd := exec.Command(w.bin, append([]string{"-chdir=" + w.dir}, args...)...)
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func startStandin(t *testing.T, opts standin.Options) string {
	t.Helper()
	opts.Environments = standin.DemoEnvironments()
	srv := httptest.NewServer(standin.New(opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestE2E_forEachOverKeysWithTwoAliasedEnvironments(t *testing.T) {
	t.Parallel()
	root := startStandin(t, standin.Options{})
	w := newWorkspace(t, fmt.Sprintf(`
provider "browserprofile" {
  alias       = "prod"
  environment = "production"
  base_url    = %q
  api_token   = %q
}

provider "browserprofile" {
  alias       = "dev"
  environment = "development"
  base_url    = %q
  api_token   = %q
}

data "browserprofile_profiles" "prod" { provider = browserprofile.prod }
data "browserprofile_profiles" "dev" { provider = browserprofile.dev }

resource "terraform_data" "dev" {
  for_each = toset(data.browserprofile_profiles.dev.profile_keys)
  input    = each.key
}

output "prod_keys" { value = data.browserprofile_profiles.prod.profile_keys }
`, root+"/production/api/v1", standin.DemoProductionToken, root+"/development/api/v1", standin.DemoDevelopmentToken))

	if out, err := w.run(nil, "apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	state, err := w.run(nil, "state", "list")
	if err != nil {
		t.Fatalf("state list: %v\n%s", err, state)
	}
	for _, key := range []string{"100% legit", "Trailing.Dot.", "bp_dev_01J0A1B2C3", "café-東京", "q?x=1#frag", "team/alpha"} {
		if addr := fmt.Sprintf("terraform_data.dev[%q]", key); !strings.Contains(state, addr) {
			t.Errorf("state has no %s:\n%s", addr, state)
		}
	}
	out, err := w.run(nil, "output", "-json", "prod_keys")
	if want := `["bp_prod_01HZX3K9Q2","bp_prod_01HZX3M7T8","bp_prod_01HZX3P4W1"]`; err != nil || strings.TrimSpace(out) != want {
		t.Errorf("prod_keys = %s (%v), want %s", out, err, want)
	}
}

// A list that may be short fails the plan by default, and is a warning only
// where the user accepted a partial list.
func TestE2E_incompleteListFailsPlanUnlessAccepted(t *testing.T) {
	t.Parallel()
	for paging, want := range map[string]string{
		"total_lies": "but it claimed 11 profiles. Paging stopped because the response gave no way to reach more",
		"offhost":    "which is not the base address's own scheme, host and port, so it was not requested",
		"loop":       "brought no profile_key that earlier pages had not",
	} {
		for _, allow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/allow=%v", paging, allow), func(t *testing.T) {
				t.Parallel()
				root := startStandin(t, standin.Options{Paging: paging, PageSize: 2})
				w := newWorkspace(t, fmt.Sprintf(`
provider "browserprofile" {
  environment           = "development"
  base_url              = %q
  api_token             = %q
  allow_incomplete_list = %v
}
data "browserprofile_profiles" "all" {}
`, root+"/development/api/v1", standin.DemoDevelopmentToken, allow))
				out, err := w.run(nil, "plan", "-input=false", "-no-color")
				flat := strings.Join(strings.Fields(out), " ")
				severity := "Error"
				if allow {
					severity = "Warning"
				}
				if (err == nil) != allow || !strings.Contains(flat, severity+": The profile list is incomplete") || !strings.Contains(flat, want) {
					t.Errorf("plan (err %v) did not report %q as %s:\n%s", err, want, severity, out)
				}
				if !allow && !strings.Contains(flat, "set allow_incomplete_list = true in the provider block") {
					t.Errorf("the error does not name the setting that accepts a partial list:\n%s", out)
				}
			})
		}
	}
}

// awkwardToken holds the characters each escaping changes.
const awkwardToken = "tok/SECRET+9f8e&x=Q1w2E3r4"

// tokenLeaks returns the forms of tok found in text: any part of 8 or more
// characters of the token, and any part of 12 or more of its encodings.
func tokenLeaks(text, tok string) []string {
	jsonTok, _ := json.Marshal(tok)
	// base64 of the token after a prefix, less the characters that also
	// encode the prefix.
	b64After := func(prefix string) string {
		return base64.StdEncoding.EncodeToString([]byte(prefix + tok))[(8*len(prefix)+5)/6:]
	}
	encoded := []string{
		b64After(""), b64After("Bearer "), b64After("Authorization: Bearer "),
		url.QueryEscape(tok), url.PathEscape(tok), strings.ReplaceAll(string(jsonTok), "/", `\/`), html.EscapeString(tok),
	}
	var leaks []string
	windows := func(s string, n int) {
		for i := 0; i+n <= len(s); i++ {
			if strings.Contains(text, s[i:i+n]) {
				leaks = append(leaks, s[i:i+n])
				return
			}
		}
	}
	windows(tok, 8)
	for _, e := range encoded {
		if e != tok {
			windows(e, 12)
		}
	}
	return leaks
}

// The token never appears, in any form or part, in terraform's output, the
// TF_LOG=trace log or state, whichever way the service echoes it.
// gatewaySecret is a gateway header's value, a secret like the token.
const gatewaySecret = "gw-secret-4f7c9a2e1d6b"

func TestE2E_traceLogsNeverShowTheToken(t *testing.T) {
	t.Parallel()
	// reads succeed; missing fails, with the list quoted in its detail.
	const reads = `
data "browserprofile_profiles" "all" {}
data "browserprofile_profile" "one" { profile_key = "team/alpha" }
`
	const missing = `data "browserprofile_profile" "missing" { profile_key = "Marketing Team" }`
	type tc struct {
		opts  standin.Options
		block string // provider block lines beside base_url
		right bool   // the stand-in accepts awkwardToken
		want  string // what the run must show, so that it proves something
		apply bool
	}
	cases := map[string]tc{
		"from the variable":   {opts: standin.Options{FailEvery: 3}, right: true, want: "Profile not found"},
		"from the block":      {opts: standin.Options{FailEvery: 3}, block: "api_token = \"" + awkwardToken + "\"", right: true, want: "Profile not found"},
		"next link, followed": {opts: standin.Options{Paging: "token_link", PageSize: 2}, right: true, want: "Apply complete", apply: true},
		"next link, stalled":  {opts: standin.Options{Paging: "token_loop", PageSize: 2}, right: true, want: "The profile list is incomplete"},
		"status line":         {opts: standin.Options{EchoAs: "status"}, block: "max_retries = 1", want: "The service was rate limiting or unavailable"},
		"a gateway's header": {opts: standin.Options{FailEvery: 3}, block: "headers = { X-Gateway-Secret = \"" + gatewaySecret + "\" }",
			right: true, want: "Profile not found"},
	}
	for _, form := range []string{"json", "base64", "url", "html", "header", "split"} {
		cases["echo, "+form] = tc{opts: standin.Options{EchoAs: form}, want: "API token rejected"}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc.opts.Environments = standin.DemoEnvironments()
			if tc.right {
				tc.opts.Environments[1].Token = awkwardToken
			}
			srv := httptest.NewServer(standin.New(tc.opts))
			t.Cleanup(srv.Close)
			w := newWorkspace(t, fmt.Sprintf(`
provider "browserprofile" {
  environment      = "development"
  base_url         = %q
  min_wait_seconds = 1
  %s
}
`, srv.URL+"/development/api/v1", tc.block)+reads+map[bool]string{false: missing, true: ""}[tc.apply])
			logFile := filepath.Join(w.dir, "trace.log")
			env := []string{"TF_LOG=trace", "TF_LOG_PATH=" + logFile}
			if !strings.Contains(tc.block, "api_token") {
				env = append(env, "BROWSERPROFILE_DEVELOPMENT_API_TOKEN="+awkwardToken)
			}
			cmd := []string{"plan", "-input=false", "-no-color"}
			if tc.apply {
				cmd = []string{"apply", "-auto-approve", "-input=false", "-no-color"}
			}
			out, _ := w.run(env, cmd...)
			logText, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(logText), "browserprofile.http") || !strings.Contains(out, tc.want) {
				t.Fatalf("the run did not go as expected (want %q):\n%.3000s", tc.want, out)
			}
			state, _ := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
			for where, text := range map[string]string{"output": out, "TF_LOG": string(logText), "state": string(state)} {
				if leaks := tokenLeaks(text, awkwardToken); len(leaks) > 0 {
					t.Errorf("%s holds the token: %q", where, leaks)
				}
				if leaks := tokenLeaks(text, gatewaySecret); len(leaks) > 0 {
					t.Errorf("%s holds the gateway header's value: %q", where, leaks)
				}
			}
			if tc.apply && !strings.Contains(string(state), "team/alpha") {
				t.Errorf("no state was written")
			}
		})
	}
}
