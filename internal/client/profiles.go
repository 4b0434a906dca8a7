package client

import (
	"context"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
)

// GetProfile reads one profile by its profile_key. A key that CheckProfileKey
// refuses is never sent.
func (c *Client) GetProfile(ctx context.Context, key string) (records.Profile, error) {
	if err := CheckProfileKey(key); err != nil {
		return records.Profile{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	u := profileURL(c.base, key)
	resp, err := c.get(ctx, u)
	if err != nil {
		return records.Profile{}, err
	}
	if records.IsErrorObject(resp.Body) {
		e := c.shapeError(u, resp, nil)
		e.Kind, e.Key = ErrErrorObject, key
		return records.Profile{}, e
	}
	p, err := records.Decode(resp.Body)
	if err != nil {
		return records.Profile{}, c.shapeError(u, resp, err)
	}
	if p.Key != key {
		// Never store one profile's record under another's key.
		e := c.shapeError(u, resp, nil)
		e.Kind, e.Key, e.GotKey = ErrWrongRecord, key, c.redactor.Quote(p.Key)
		return records.Profile{}, e
	}
	return p, nil
}
