package e2e

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceredis"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// A Redis store that can never work as set is one warning on the plan's
// output, naming the setting and the cause, while the plan paces alone
// and passes; a Redis that is only gone is no warning. Neither the
// password nor the token is in the output, the TF_LOG=trace log or state.
func TestE2E_aStoreThatCanNeverWorkIsAWarning(t *testing.T) {
	t.Parallel()
	const password = "r3dis-Pa55-8d1c"
	redisd, _ := daemons.Redis(t, true, "user default off", "user ci-runner on >"+password+" ~browserprofile:pace:* "+paceredis.ACL)
	gone := daemons.New(t, "redis-server", true) // an address where no Redis listens
	for name, tc := range map[string]struct {
		block, env   string // the store, in the provider block or its variable
		summary, why string // the warning's, or none
	}{
		"a wrong password, from the variable": {env: "redis://ci-runner:wrong-" + password + "@" + redisd.Addr,
			summary: "BROWSERPROFILE_PACE_STORE cannot be used as set", why: "refused the user or password"},
		"a database it does not have, from the block": {block: "redis://ci-runner:" + password + "@" + redisd.Addr + "/99",
			summary: "pace_store cannot be used as set", why: "has no database of the number"},
		"a Redis that is not there": {env: "redis://ci-runner:" + password + "@" + gone.Addr},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			envs := standin.DemoEnvironments()
			envs[1].Token = awkwardToken
			srv := httptest.NewServer(standin.New(standin.Options{Environments: envs}))
			t.Cleanup(srv.Close)
			block := ""
			if tc.block != "" {
				block = fmt.Sprintf("pace_store = %q", tc.block)
			}
			w := newWorkspace(t, fmt.Sprintf(`
provider "browserprofile" {
  environment = "development"
  base_url    = %q
  %s
}
data "browserprofile_profiles" "all" {}
data "browserprofile_profile" "one" { profile_key = "team/alpha" }
data "browserprofile_profile" "two" { profile_key = "bp_dev_01J0A1B2C3" }
`, srv.URL+"/development/api/v1", block))
			logFile := filepath.Join(w.dir, "trace.log")
			env := []string{"TF_LOG=trace", "TF_LOG_PATH=" + logFile, "BROWSERPROFILE_DEVELOPMENT_API_TOKEN=" + awkwardToken}
			if tc.env != "" {
				env = append(env, "BROWSERPROFILE_PACE_STORE="+tc.env)
			}
			out, err := w.run(env, "apply", "-auto-approve", "-input=false", "-no-color")
			if err != nil {
				t.Fatalf("the plan failed: %v\n%s", err, out)
			}
			// Beside the CLI's own, for dev_overrides.
			warnings := strings.Count(out, "Warning: ") - strings.Count(out, "Warning: Provider development overrides")
			switch {
			case tc.summary == "" && warnings != 0:
				t.Errorf("a Redis only gone: want no warning, got:\n%s", out)
			case tc.summary != "" && (warnings != 1 || !strings.Contains(out, "Warning: "+tc.summary) || !strings.Contains(out, tc.why)):
				t.Errorf("want one warning %q that %s, got:\n%s", tc.summary, tc.why, out)
			}
			logText, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			if tc.summary == "" && !strings.Contains(string(logText), "the shared pace's store is away") {
				t.Errorf("a Redis only gone: want its debug line")
			}
			state, _ := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
			for where, text := range map[string]string{"output": out, "TF_LOG": string(logText), "state": string(state)} {
				for _, secret := range []string{password, awkwardToken} {
					if leaks := tokenLeaks(text, secret); len(leaks) > 0 {
						t.Errorf("%s holds a secret: %q", where, leaks)
					}
				}
			}
		})
	}
}
