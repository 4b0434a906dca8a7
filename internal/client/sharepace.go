package client

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceshare"
)

// DefaultPaceDir is where runs on this machine share their pace, unless a
// setting names another directory: under the user's cache directory.
func DefaultPaceDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "terraform-provider-browserprofile", "pace"), nil
}

// sharePace makes p's pace one with the other processes' that talk to the
// same service with the same token, or says why it cannot: the plan then
// goes on at its own pace.
func sharePace(p *pace.Pacer, cfg Config) error {
	dir := cfg.PaceDir
	if dir == "" {
		var err error
		if dir, err = DefaultPaceDir(); err != nil {
			return fmt.Errorf("no cache directory: %w", err)
		}
	}
	store, err := paceshare.Open(dir, pace.StateFormat, cfg.BaseURL.String(), cfg.Token)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	p.Share(store)
	return nil
}
