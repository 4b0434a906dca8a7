package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// logLines are the JSON lines a tflogtest logger wrote.
func logLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for line := range strings.Lines(b.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// TestTally_theLogSaysWhereTheTimeWent: a read through an outage and a
// refusal logs, for each attempt, its number, its wait for the pace, the
// back-off before it and its time on the wire; the pace's cut as it
// happens, between the refusal and the retry; and one INFO line that ends
// the read, whose refusals are the ones the service sent.
func TestTally_theLogSaysWhereTheTimeWent(t *testing.T) {
	t.Parallel()
	var n, refusals atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			refusals.Add(1)
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			io.WriteString(w, `{"profile_key":"a"}`)
		}
	})
	var logs bytes.Buffer
	ctx, tally := WithTally(tflogtest.RootLogger(context.Background(), &logs))
	if _, err := c.GetProfile(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	c.LogRead(ctx, tally, map[string]any{"data_source": "browserprofile_profile"})
	var attempts []map[string]any
	var cut, done map[string]any
	for _, l := range logLines(t, &logs) {
		switch l["@message"] {
		case "response":
			attempts = append(attempts, l)
		case "the pace was cut":
			if len(attempts) == 2 {
				cut = l
			}
		case "read done":
			done = l
		}
	}
	if len(attempts) != 3 || cut == nil || done == nil {
		t.Fatalf("attempts %d, the cut between the refusal and its retry %v, the read's end %v:\n%s", len(attempts), cut, done, logs.String())
	}
	for i, a := range attempts {
		for _, field := range []string{"attempt", "pace_wait_ms", "backoff_ms", "duration_ms", "shared"} {
			if _, ok := a[field]; !ok {
				t.Errorf("attempt %d has no %s: %v", i+1, field, a)
			}
		}
		if a["attempt"] != float64(i+1) {
			t.Errorf("attempt %d numbered %v", i+1, a["attempt"])
		}
	}
	// The outage's retry backs off at least min_wait (5 ms here); the
	// refusal's is spaced by the pace alone.
	if b, _ := attempts[1]["backoff_ms"].(float64); b < 5 {
		t.Errorf("the outage's retry backed off %v ms: want at least min_wait", b)
	}
	if cut["from_per_second"] == nil || cut["to_per_second"] == nil || cut["measured"] == nil {
		t.Errorf("the cut says %v: want from, to and what it measured", cut)
	}
	if done["@level"] != "info" || done["requests"] != float64(3) || done["refused"] != float64(refusals.Load()) ||
		done["outage_retries"] != float64(1) || done["data_source"] != "browserprofile_profile" {
		t.Errorf("the read's end: %v, want 3 requests, %d refused, one outage retried, at INFO", done, refusals.Load())
	}
	for _, field := range []string{"wall_ms", "pace_wait_ms", "backoff_ms", "wire_ms"} {
		if _, ok := done[field]; !ok {
			t.Errorf("the read's end has no %s", field)
		}
	}
}

// TestTally_aReadWithoutOneCountsNothing: a read whose context has no
// Tally (the client's own, outside a data source) logs its attempts all
// the same.
func TestTally_aReadWithoutOneCountsNothing(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"profile_key":"a"}`) })
	var logs bytes.Buffer
	if _, err := c.GetProfile(tflogtest.RootLogger(context.Background(), &logs), "a"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"pace_wait_ms"`) {
		t.Fatalf("no wait in the attempt's line:\n%s", logs.String())
	}
}

// BenchmarkTally_aReadLogged: one read through the client's transport,
// logging off (no logger, as when TF_LOG is unset) and at debug: what the
// attempt's line, the pace's events and the read's end cost.
func BenchmarkTally_aReadLogged(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"profile_key":"a"}`)
	}))
	b.Cleanup(srv.Close)
	base, err := ParseBaseURL(srv.URL + "/api/v1")
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(Config{BaseURL: base, Token: testToken, UserAgent: "bench", RequestsPerSecond: 1e6})
	if err != nil {
		b.Fatal(err)
	}
	for name, ctx := range map[string]context.Context{
		"off":   context.Background(),
		"debug": tflogtest.RootLogger(context.Background(), io.Discard),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctx, tally := WithTally(ctx)
				if _, err := c.GetProfile(ctx, "a"); err != nil {
					b.Fatal(err)
				}
				c.LogRead(ctx, tally, map[string]any{"data_source": "browserprofile_profile"})
			}
		})
	}
}
