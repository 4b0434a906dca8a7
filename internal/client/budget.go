package client

import (
	"fmt"
	"sync"

	"golang.org/x/sync/semaphore"
)

// A provider block's reads share one memory budget for the bodies they are
// reading, MaxBodyBytes in all, so that many large reads at once (eight data
// sources each refusing an oversized body, say) cannot together exhaust a
// CI runner: a read that would take the budget past it fails at once,
// naming the setting, instead of waiting on memory other reads may never
// release. A request holds what it took until its body is read.

// bodyBudget is one request's share of the client's budget.
type bodyBudget struct {
	sem  *semaphore.Weighted
	max  int64
	mu   sync.Mutex
	held int64
}

// newBodyBudget starts a request's share; releaseAll gives it back.
func (c *Client) newBodyBudget() *bodyBudget {
	return &bodyBudget{sem: c.bodies, max: c.cfg.MaxBodyBytes}
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
