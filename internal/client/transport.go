package client

import (
	"io"
	"net/http"
	"sync"
	"time"

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
}

func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ticket, err := t.pacer.Wait(req.Context())
	if err != nil {
		return nil, err
	}
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
	} else if resp.StatusCode < 300 {
		// A quota is read from the answers it accepted, which a service
		// announcing one sends with every one. A refusal's reset, often
		// a rounding of a much shorter wait, holds only through its
		// Retry-After.
		answer.Quota = resp.Header
	}
	t.pacer.Done(ticket, answer)
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	defer b.release()
	return b.ReadCloser.Close()
}
