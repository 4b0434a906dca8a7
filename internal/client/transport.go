package client

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// pacedTransport puts every attempt (retries and redirects included)
// through the provider block's pace.Pacer: some services of this kind
// revoke a token that keeps hitting their rate limit. A request holds its
// place until its body has been read.
type pacedTransport struct {
	next     http.RoundTripper
	pacer    *pace.Pacer
	redactor *redact.Redactor
	// notShared is why a pace meant to be shared is not: told once, at
	// debug level, as the plan goes on at its own pace.
	notShared error
	told      atomic.Bool
}

func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ticket, err := t.pacer.Wait(req.Context())
	if err != nil {
		return nil, err
	}
	t.tellAlone(req.Context())
	release := sync.OnceFunc(func() { t.pacer.Release(ticket) })
	sent := time.Now()
	resp, err := t.next.RoundTrip(req)
	logAttempt(req, resp, err, time.Since(sent), t.redactor)
	if err != nil {
		t.pacer.Done(ticket, pace.Answer{Failed: true})
		release()
		return nil, err
	}
	answer := pace.Answer{Refused: rateLimited(resp)}
	if answer.Refused {
		answer.RetryAfter, _ = retryAfter(resp.Header, time.Now())
	}
	if answer.Refused || resp.StatusCode < 300 {
		// A quota is read from the answers it accepted, which a service
		// announcing one sends with every one; a refusal's tells whether
		// it was the quota's.
		answer.Quota = resp.Header
	}
	t.pacer.Done(ticket, answer)
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// tellAlone logs, once, why the pace is not shared with other runs, and,
// each time, what went amiss in a shared step (a damaged state started
// afresh, a lock held too long by a stopped run).
func (t *pacedTransport) tellAlone(ctx context.Context) {
	if note := t.pacer.Note(); note != nil {
		tflog.SubsystemDebug(ctx, logSubsystem, "the shared pace went on past a fault", map[string]any{"reason": note.Error()})
	}
	if t.told.Load() {
		return
	}
	err := t.notShared
	if err == nil {
		err = t.pacer.Alone()
	}
	if err != nil && t.told.CompareAndSwap(false, true) {
		tflog.SubsystemDebug(ctx, logSubsystem, "the pace is not shared with other runs", map[string]any{"reason": err.Error()})
	}
}

type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	defer b.release()
	return b.ReadCloser.Close()
}
