package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBody_sizeLimit(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `[`+strings.Repeat(`{"profile_key":"aaaaaaaa"},`, 100)+`{"profile_key":"z"}]`)
	}, func(c *Config) { c.MaxBodyBytes = 1000 })
	if _, err := c.ListProfiles(context.Background()); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("err = %v, want ErrBodyTooLarge", err)
	}
}

func TestGet_identicalReadsInFlightAreSentOnce(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	release := make(chan struct{})
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		<-release
		io.WriteString(w, `{"profile_key":`+quote(path.Base(r.URL.Path))+`}`)
	})
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(context.Background(), "k"); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("%d requests for 5 identical reads in flight", n.Load())
	}
}
