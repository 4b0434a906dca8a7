package client

import (
	"context"
	"errors"
	"sync"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
)

// A provider block reads its list at most once per plan: the list data
// source and the help a missing key gets (did you mean, the service's own
// spelling of a key) share one read, its result or its error, however many
// callers ask and however many at once. A read runs under a context of its
// own, detached from any one caller's cancellation and bounded by the
// read's own timeout; each caller waits on its own context, so a caller
// that gives up (or is cancelled) fails nobody else. A second read starts
// only after the first failed for a reason a retry could mend.

// listCall is one read of the list, done when done is closed.
type listCall struct {
	done chan struct{}
	list *listing.List
	err  error
}

// sharedList holds a client's list read.
type sharedList struct {
	mu   sync.Mutex
	call *listCall
}

// ListProfiles reads every profile the token can see, following pages, or
// returns the read another caller started.
func (c *Client) ListProfiles(ctx context.Context) (*listing.List, error) {
	call := c.lists.join(ctx, c)
	select {
	case <-call.done:
		return call.list, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// join returns the read to wait on, starting one if there is none or the
// last failed in a way a retry could mend.
func (s *sharedList) join(ctx context.Context, c *Client) *listCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.call != nil {
		select {
		case <-s.call.done:
			if !mendable(s.call.err) {
				return s.call
			}
		default:
			return s.call // still under way
		}
	}
	call := &listCall{done: make(chan struct{})}
	s.call = call
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.Timeout)
	go func() {
		defer cancel()
		defer close(call.done)
		call.list, call.err = c.readList(readCtx)
	}()
	return call
}

// mendable tells the failures a later read could mend: rate limits,
// outages, timeouts, a service not listening yet.
func mendable(err error) bool {
	return err != nil && (errors.Is(err, ErrUnavailable) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrNoAnswer) ||
		errors.Is(err, ErrRefused) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
}

// detached returns a context for work shared by several callers: ctx's
// values, none of its cancellation, and its deadline, if it has one.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(d, deadline)
	}
	return context.WithCancel(d)
}
