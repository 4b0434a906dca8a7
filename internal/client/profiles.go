package client

import (
	"context"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
)

// GetProfile reads one profile by its profile_key. A key that CheckProfileKey
// refuses is never sent.
func (c *Client) GetProfile(ctx context.Context, key string) (listing.Profile, error) {
	if err := CheckProfileKey(key); err != nil {
		return listing.Profile{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	u := profileURL(c.base, key)
	resp, err := c.get(ctx, u)
	if err != nil {
		return listing.Profile{}, err
	}
	if listing.IsErrorObject(resp.Body) {
		e := c.shapeError(u, resp, nil)
		e.Kind, e.Key = ErrErrorObject, key
		return listing.Profile{}, e
	}
	p, err := listing.DecodeProfile(resp.Body)
	if err != nil {
		return listing.Profile{}, c.shapeError(u, resp, err)
	}
	if p.Key != key {
		// Never store one profile's record under another's key.
		e := c.shapeError(u, resp, nil)
		e.Kind, e.Key, e.GotKey = ErrWrongRecord, key, c.redactor.Quote(p.Key)
		return listing.Profile{}, e
	}
	return p, nil
}
