package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
)

// readList reads the whole list (internal/listing), each page sent through
// get: paced, retried, and shared with identical reads in flight.
func (c *Client) readList(ctx context.Context) (*listing.List, error) {
	list, err := listing.Read(ctx, pageSource{c}, listing.Options{
		List:     listURL(c.base),
		Paging:   c.cfg.Paging,
		MaxPages: c.cfg.MaxPages,
		MaxBytes: c.cfg.MaxBodyBytes,
		Redactor: c.redactor,
	})
	var shape *listing.ShapeError
	var tooLarge *listing.TooLargeError
	switch {
	case errors.As(err, &shape):
		return nil, c.shapeError(shape.URL, shape.Page, shape.Err)
	case errors.As(err, &tooLarge):
		return nil, &RequestError{Kind: ErrBodyTooLarge, Method: http.MethodGet, URL: tooLarge.URL, Cause: tooLarge}
	}
	return list, err
}

// pageSource fetches the list's pages for listing.Read.
type pageSource struct{ c *Client }

func (s pageSource) Fetch(ctx context.Context, u *url.URL) (*listing.Page, error) {
	return s.c.get(ctx, u)
}

func (s pageSource) OnOrigin(u *url.URL) bool { return sameOrigin(s.c.base, u) }
