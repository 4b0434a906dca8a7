package provider

import (
	"fmt"
	"os"
	"testing"
)

// testPaceDir is where the tests' providers share their pace.
var testPaceDir string

// TestMain keeps the pace the tests' providers share in a temporary
// directory, whatever environment a test gives them (noEnv): go test
// writes nothing in the user's cache.
func TestMain(m *testing.M) {
	var err error
	if testPaceDir, err = os.MkdirTemp("", "browserprofile-provider-pace-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv(EnvPaceDir) == "" {
		os.Setenv(EnvPaceDir, testPaceDir)
	}
	code := m.Run()
	os.RemoveAll(testPaceDir)
	os.Exit(code)
}
