package client

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/semaphore"
)

// A provider block's reads share one memory budget for the bodies they hold,
// MaxBodyBytes in all, so that many large reads at once (eight data sources
// each refusing an oversized body, say) cannot together exhaust a CI
// runner: a read that would take the budget past it fails at once, naming
// the setting, instead of waiting on memory other reads may never release.
// A read holds what it took until the client call that made it returns.

// bodyBudget is one client call's share of the client's budget.
type bodyBudget struct {
	sem  *semaphore.Weighted
	max  int64
	mu   sync.Mutex
	held int64
}

type budgetKey struct{}

// withBodyBudget starts a client call's share; done gives it back.
func (c *Client) withBodyBudget(ctx context.Context) (_ context.Context, done func()) {
	b := &bodyBudget{sem: c.bodies, max: c.cfg.MaxBodyBytes}
	return context.WithValue(ctx, budgetKey{}, b), b.releaseAll
}

// budgetFrom returns the call's share, or, for a request made outside one,
// a share of its own with the function that gives it back when the request
// is done: a share nobody gave back would shrink the budget for good.
func budgetFrom(ctx context.Context, c *Client) (_ *bodyBudget, done func()) {
	if b, ok := ctx.Value(budgetKey{}).(*bodyBudget); ok {
		return b, func() {}
	}
	b := &bodyBudget{sem: c.bodies, max: c.cfg.MaxBodyBytes}
	return b, b.releaseAll
}

// take reserves n more bytes, or fails when the reads in flight hold too much.
func (b *bodyBudget) take(n int64) error {
	if !b.sem.TryAcquire(n) {
		return fmt.Errorf("%w: the responses being read at once would hold more than the limit of %d bytes together", ErrBodyTooLarge, b.max)
	}
	b.mu.Lock()
	b.held += n
	b.mu.Unlock()
	return nil
}

// mark and releaseSince give back what was taken after a mark: an attempt
// whose body is dropped.
func (b *bodyBudget) mark() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

func (b *bodyBudget) releaseAll() { b.releaseSince(0) }

func (b *bodyBudget) releaseSince(mark int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held > mark {
		b.sem.Release(b.held - mark)
		b.held = mark
	}
}
