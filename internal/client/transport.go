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
	ctx := req.Context()
	backoff := attemptsFrom(ctx).takeBackoff()
	ticket, err := t.pacer.Wait(ctx)
	t.tell(ctx)
	if err != nil {
		return nil, err
	}
	release := sync.OnceFunc(func() { t.pacer.Release(ticket) })
	sent := time.Now()
	resp, err := t.next.RoundTrip(req)
	took := time.Since(sent)
	logAttempt(req, resp, err, attemptTimes{ticket: ticket, backoff: backoff, wire: took}, t.redactor)
	answer := pace.Answer{Failed: err != nil, Refused: err == nil && rateLimited(resp)}
	tallyFrom(ctx).attempt(ticket.Waited().Total(), backoff, took, answer.Refused)
	if err != nil {
		t.pacer.Done(ticket, answer)
		t.tell(ctx)
		release()
		return nil, err
	}
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
	t.tell(ctx)
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// tell logs the pace's changes since it last did (pace.Event), each when
// the step that made it returns, and, once, why the pace is not shared
// with other runs. A store's reason may hold Redis's words: masked.
func (t *pacedTransport) tell(ctx context.Context) {
	for _, e := range t.pacer.Events() {
		fields := e.Fields
		if reason, ok := fields["reason"].(string); ok {
			fields["reason"] = t.redactor.Redact(reason)
		}
		tflog.SubsystemDebug(ctx, logSubsystem, e.Message, fields)
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
