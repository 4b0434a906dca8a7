package e2e

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// fleetToken is the fleet's one token, for the one limit they share.
const fleetToken = "bp_fleet_7Hq2LmX9pR4t"

// TestE2E_plansAtOnceShareOneLimit: plans started together on one machine,
// each its own provider process with the same token, behind one limit of
// 50 requests a second (the stand-in's bucket, or a real nginx's
// limit_req, which sends no Retry-After), pace as one: none fails, and
// few of their requests are refused.
func TestE2E_plansAtOnceShareOneLimit(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run the end-to-end tests")
	}
	t.Parallel()
	const plans, reads = 4, 40
	for name, front := range map[string]func(t *testing.T, upstream string) (string, func() (requests, refused int)){
		"the stand-in's bucket": nil,
		"nginx limit_req": func(t *testing.T, upstream string) (string, func() (int, int)) {
			addr, statuses := daemons.Nginx(t, upstream, true)
			return addr, func() (int, int) { all := statuses(); return len(all), daemons.Refusals(all) }
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := standin.Options{Environments: []standin.Environment{{Name: "production", Token: fleetToken, Profiles: standin.Generate(plans * reads)}}}
			if front == nil {
				opts.RateLimit, opts.RateBurst = 50, 10
			}
			s := standin.New(opts)
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			addr, counts := srv.Listener.Addr().String(), func() (int, int) { return int(s.Requests.Load()), int(s.Limited.Load()) }
			if front != nil {
				addr, counts = front(t, addr)
			}
			paceDir := t.TempDir()
			var wg sync.WaitGroup
			outs, errs := make([]string, plans), make([]error, plans)
			for i := range plans {
				w := newWorkspace(t, fleetPlan("http://"+addr+"/production/api/v1", paceDir, i*reads, reads))
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i], errs[i] = w.run(nil, "plan", "-input=false", "-no-color", "-refresh=false")
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil || !strings.Contains(outs[i], fmt.Sprintf("read = %d", reads)) {
					t.Errorf("plan %d: %v\n%s", i, err, outs[i])
				}
			}
			requests, refused := counts()
			t.Logf("%d of %d requests refused", refused, requests)
			// The ideal sends 4 x 41 requests, none refused; a start that
			// overshoots the limit and the probes that find it cost a few.
			if requests < plans*(reads+1) || refused > requests/10 {
				t.Errorf("%d of %d requests refused: want at most a tenth", refused, requests)
			}
		})
	}
}

// fleetPlan is one plan of the fleet: the list and reads profiles of its
// own from the first'th, pacing through paceDir.
func fleetPlan(base, paceDir string, first, reads int) string {
	return fmt.Sprintf(`
provider "browserprofile" {
  base_url  = %q
  api_token = %q
  pace_dir  = %q
}

data "browserprofile_profiles" "all" {}

data "browserprofile_profile" "each" {
  for_each    = toset([for i in range(%d, %d) : format("bp_gen_%%07d", i)])
  profile_key = each.key
}

output "read" { value = "read = ${length(data.browserprofile_profile.each)}" }
`, base, fleetToken, paceDir, first, first+reads)
}
