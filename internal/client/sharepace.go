package client

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceredis"
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
// same service with the same token, in the Redis PaceStore names or else
// in PaceDir, or says why it cannot: the plan then goes on at its own pace.
// fault, for a Redis, tells why it cannot work as set (paceredis.Fault).
func sharePace(p *pace.Pacer, cfg Config) (fault func() *paceredis.Fault, err error) {
	if cfg.PaceStore != "" {
		store, err := paceredis.Open(cfg.PaceStore, cfg.RootCAs,
			pace.StateFormat, cfg.BaseURL.String(), cfg.Token)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", paceredis.Where(cfg.PaceStore), err)
		}
		p.Share(store)
		return store.Fault, nil
	}
	dir := cfg.PaceDir
	if dir == "" {
		if dir, err = DefaultPaceDir(); err != nil {
			return nil, fmt.Errorf("no cache directory: %w", err)
		}
	}
	store, err := paceshare.Open(dir, pace.StateFormat, cfg.BaseURL.String(), cfg.Token)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	p.Share(store)
	return nil, nil
}

// StoreFault says, once per Client, why the Redis PaceStore names cannot
// work as set (paceredis.Fault), Redis's words masked as the service's
// are: nil while it works or fails only for now, and once told.
func (c *Client) StoreFault() error {
	if c.storeFault == nil {
		return nil
	}
	f := c.storeFault()
	if f == nil || !c.faultTold.CompareAndSwap(false, true) {
		return nil
	}
	// Redis's words are masked where they enter; the cause is the
	// provider's, the address the user's.
	return &paceredis.Fault{Where: f.Where, Cause: f.Cause, Err: errors.New(c.redactor.Redact(f.Err.Error()))}
}

// CheckPaceStore says why raw cannot name a Redis to share the pace in, or
// nil; its message never repeats raw, which may hold a password.
func CheckPaceStore(raw string) error {
	_, err := paceredis.Parse(raw)
	return err
}

// paceStorePassword is the password in a store's address, if any.
func paceStorePassword(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}
