// Package listing reads the profile list: it finds each next page (the
// conventions of hints.go, Link headers, or the paging the user described),
// checks every page against what the service claims of the whole list, and
// decodes the records. It sends nothing itself: a Source fetches each page,
// so that every rule can be tested by feeding pages directly.
//
// It knows nothing of Terraform or of HTTP requests and retries (the
// client's); what it shows of outside text passes through the Redactor it
// is given.
package listing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// Page is one 2xx answer whose body is JSON: a page of the list, or, for
// the client, one profile's record.
type Page struct {
	URL      *url.URL // the address answered, after any redirect
	Status   int
	Header   http.Header
	Body     []byte
	Requests int // requests sent for it, retries included
}

// Source fetches the pages of the list.
type Source interface {
	// Fetch returns the page at u, or the error that ends the read.
	Fetch(ctx context.Context, u *url.URL) (*Page, error)
	// OnOrigin reports whether u is on the base address's own scheme, host
	// and port: the only place the token may be sent, and so the only place
	// a next page is requested from.
	OnOrigin(u *url.URL) bool
}

// Options shape one Read.
type Options struct {
	List     *url.URL // the list's address, GET /browsers
	Paging   *Paging  // nil: follow the conventions of hints.go
	MaxPages int      // pages read at most; reaching it makes the list incomplete
	MaxBytes int64    // what the kept records may hold on to in all
	Redactor *redact.Redactor
}

// ShapeError is a page whose body could not be read as a list.
type ShapeError struct {
	URL  *url.URL // the address requested
	Page *Page
	Err  error
}

func (e *ShapeError) Error() string { return e.Err.Error() }
func (e *ShapeError) Unwrap() error { return e.Err }

// TooLargeError is a list whose pages together hold more than the bytes
// allowed.
type TooLargeError struct {
	URL   string // the page that crossed the limit, as diagnostics show it
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the list's pages together hold more than %d bytes", e.Limit)
}

var errTooLarge = errors.New("too large")

// firstURL is the list's address, with the paging setting's first page and
// page size.
func firstURL(list *url.URL, pc *Paging) *url.URL {
	u := list
	if pc == nil {
		return u
	}
	if pc.PageSizeParam != "" {
		u = withParam(u, pc.PageSizeParam, strconv.Itoa(pc.PageSize))
	}
	switch {
	case pc.PageParam != "":
		u = withParam(u, pc.PageParam, strconv.Itoa(pc.FirstPage))
	case pc.OffsetParam != "":
		u = withParam(u, pc.OffsetParam, "0")
	}
	return u
}
