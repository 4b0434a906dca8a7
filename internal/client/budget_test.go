package client

import (
	"errors"
	"testing"
)

// Reads in flight share one budget: while one holds most of it, another
// large read is refused at once, and the budget is whole again after.
func TestBodyBudget_isSharedByReadsInFlight(t *testing.T) {
	t.Parallel()
	c := clientFor(t, "https://api.example.com/api/v1", func(c *Config) { c.MaxBodyBytes = 4 << 20 })
	first := c.newBodyBudget()
	if err := first.take(3 << 20); err != nil {
		t.Fatal(err)
	}
	second := c.newBodyBudget()
	if err := second.take(3 << 20); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("second large read: err = %v", err)
	}
	second.releaseAll()
	first.releaseAll()
	third := c.newBodyBudget()
	defer third.releaseAll()
	if err := third.take(4 << 20); err != nil {
		t.Errorf("after all returned: %v", err)
	}
}
