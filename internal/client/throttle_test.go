package client

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

func TestThrottle_capsRequestsInFlight(t *testing.T) {
	t.Parallel()
	var cur, peak atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		v := cur.Add(1)
		for {
			p := peak.Load()
			if v <= p || peak.CompareAndSwap(p, v) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		cur.Add(-1)
		io.WriteString(w, `{"profile_key":`+quote(path.Base(r.URL.Path))+`}`)
	}, func(c *Config) { c.MaxConcurrent = 3 })
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(context.Background(), strings.Repeat("k", i+1)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if peak.Load() > 3 {
		t.Errorf("%d requests in flight, cap 3", peak.Load())
	}
}

// refusedRoundingUp is a 429 as most services send it: Retry-After rounded
// up to a whole second. observe only reads it, so tests share it.
var refusedRoundingUp = &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}

func TestThrottle_pacesAServiceThatSendsNoRetryAfter(t *testing.T) {
	t.Parallel()
	// A fixed window of 20 requests per 250ms, answered 429 without
	// Retry-After beyond it.
	var mu sync.Mutex
	window, used, limited, total := time.Now(), 0, 0, 0
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		total++
		if time.Since(window) > 250*time.Millisecond {
			window, used = time.Now(), 0
		}
		used++
		over := used > 20
		if over {
			limited++
		}
		mu.Unlock()
		if over {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `{"profile_key":`+quote(path.Base(r.URL.Path))+`}`)
	}, func(c *Config) { c.MaxRetries = 8; c.Timeout = time.Minute })
	var wg sync.WaitGroup
	for i := range 120 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(context.Background(), fmt.Sprintf("k%d", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if limited*4 > total {
		t.Errorf("%d of %d requests answered 429", limited, total)
	}
}

// 429s to requests sent before the pace was set were in flight: they are
// the same event, and change nothing. A 429 to a request sent after it, with
// nothing accepted in between, means the service refuses everything for now
// (a fixed window spent): every request is held back until the window's
// wall-clock second ends; should a probe then be refused too, for twice a
// probe's time, then twice that, never past Retry-After, and the pace is not
// learnt from it.
func TestThrottle_inFlightRefusalsAreOneEventAndRefusingEverythingHolds(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	before := time.Now()
	th.observe(refusedRoundingUp, before, 0)
	first := th.pace
	th.observe(refusedRoundingUp, before, 0)
	th.observe(refusedRoundingUp, before, 0)
	if th.pace != first || th.pausedUntil.After(time.Now()) {
		t.Fatalf("refusals in flight moved the pace from %v to %v, or held requests until %v", first, th.pace, th.pausedUntil)
	}
	start := time.Now()
	th.observe(refusedRoundingUp, start, 0)
	if end := th.pausedUntil; !end.After(start) || end.Sub(start) > time.Second+windowMargin || end.Nanosecond() != int(windowMargin) {
		t.Errorf("a window spent at %v held requests until %v, want %v after the next whole second", start, end, windowMargin)
	}
	for i, want := range []time.Duration{2 * probeGap, time.Second} {
		th.pausedUntil = time.Time{}
		start := time.Now()
		th.observe(refusedRoundingUp, start, 0)
		if held := th.pausedUntil.Sub(start); held < want || held > want+50*time.Millisecond {
			t.Errorf("refusal %d with nothing accepted held requests for %v, want %v", i+2, held, want)
		}
	}
	if th.pace != first/2 {
		t.Errorf("after three holds the pace is %v, want half of %v", th.pace, first)
	}
}

// The pace grows only while the requests keep up with it: a pace nobody
// waits for says nothing about what the service would accept.
func TestThrottle_growsOnlyAPaceThatHoldsRequestsBack(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	th.setLimit(40, time.Now())
	th.sent = 2 // 2 sent in a second at a pace of 40
	th.grow(th.stepStart.Add(time.Second))
	if th.pace != 40 {
		t.Errorf("a pace the requests did not keep up with grew to %v", th.pace)
	}
	th.sent = 40
	th.grow(th.stepStart.Add(time.Second))
	if th.pace != 40*fastGrowth {
		t.Errorf("a pace the requests kept up with is %v, want %v", th.pace, 40*fastGrowth)
	}
}

// The first 429s can come before anything was accepted (a burst of one, and
// several requests in flight): the pace then starts from one request per
// slot a second, not from nothing. And after a quiet spell it grows by one
// step, not by every step the time would allow.
func TestThrottle_startsFromSlotsAndGrowsOneStepAtATime(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	sent := time.Now()
	th.accepted = []time.Time{sent, sent, sent} // not a bucket of one or two
	for range 8 {
		th.observe(refusedRoundingUp, sent, 0)
	}
	if got := th.pace; got != 8 {
		t.Fatalf("pace after a first moment of refusals = %v, want 8 per second", got)
	}
	th.sent = 100 // the pace holds requests back
	th.grow(th.stepStart.Add(10 * time.Second))
	if got := th.pace; got != 8*fastGrowth {
		t.Errorf("pace after a quiet spell = %v, want one step to %v", got, 8*fastGrowth)
	}
	if th.pausedUntil.After(time.Now().Add(2 * time.Second)) {
		t.Errorf("the pause outlasts the Retry-After: until %v", th.pausedUntil)
	}
}

// Before the first 429 nothing is paced, but a request waits for an answer
// to the one sent before it, or for firstSpacing: a bucket of one refuses
// the second of ten requests sent at once, and its 429 must come back
// before the other eight are sent.
func TestThrottle_beforeTheFirst429EachRequestWaitsForAnAnswerOrAMoment(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	if wait := time.Until(th.due()); wait > 0 {
		t.Fatalf("the first request waits %v", wait)
	}
	release, sent, _, err := th.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := th.due().Sub(sent); got != firstSpacing {
		t.Errorf("with the last request unanswered the next is due %v after it, want %v", got, firstSpacing)
	}
	th.observe(&http.Response{StatusCode: http.StatusOK}, sent.Add(-time.Millisecond), 0)
	if got := th.due().Sub(sent); got != firstSpacing {
		t.Errorf("an answer to an earlier request made the next due %v after the last, want %v", got, firstSpacing)
	}
	if th.inFlight != 1 {
		t.Errorf("%d requests in flight, want the one sent", th.inFlight)
	}
	th.landed(sent, false)
	if th.inFlight != 0 {
		t.Errorf("%d requests in flight after the only one was answered", th.inFlight)
	}
	th.observe(&http.Response{StatusCode: http.StatusOK}, sent, 0)
	if wait := time.Until(th.due()); wait > 0 {
		t.Errorf("with the last request answered the next still waits %v", wait)
	}
	select {
	case <-th.wake:
	default:
		t.Error("the answer did not wake a request waiting for it")
	}
}

// Fixed windows are counted per whole wall-clock second, minute or hour,
// and Retry-After is rounded up to whole seconds (or names the second as a
// date): the window reopens at the last whole second up to now plus
// Retry-After.
func TestWindowEnd(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 3, 548e6, time.UTC)
	for _, tc := range []struct {
		name string
		wait time.Duration
		want time.Time
	}{
		{"seconds, rounded up", time.Second, time.Date(2026, 11, 23, 12, 0, 4, 0, time.UTC).Add(windowMargin)},
		{"a date", 452 * time.Millisecond, time.Date(2026, 11, 23, 12, 0, 4, 0, time.UTC).Add(windowMargin)},
		{"a minute's window", 57 * time.Second, time.Date(2026, 11, 23, 12, 1, 0, 0, time.UTC).Add(windowMargin)},
		{"no whole second ahead", 300 * time.Millisecond, now.Add(probeGap)},
		{"none at all", 0, now},
	} {
		if got := windowEnd(now, tc.wait); !got.Equal(tc.want) {
			t.Errorf("%s: windowEnd(%v) = %v, want %v", tc.name, tc.wait, got, tc.want)
		}
	}
}

// Refused while climbing from the first estimate, the pace falls back to
// just below the step before, which was accepted, or if that came too soon
// to measure anything, by a step; a bucket of one or two (the first 429 came
// after two requests or fewer), which refuses a step above its rate almost
// at once, tries the pace between the two steps, however soon: at 30 a
// second, the climb reaches its rate within a quarter of a second. Not with
// others in flight: a limit on requests in flight whose answers are slow
// refuses early too (the jitter's step back, as before).
func TestThrottle_aRefusedClimbFallsBackBetweenTheStepsOnlyForASmallBucket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		accepted int
		soon     bool // the climb refused within minInterval of the first 429
		busy     int  // others in flight when the refused request was let go
		want     rate.Limit
	}{
		{"a bucket of one", 1, false, 0, 60 / rate.Limit(math.Sqrt(fastGrowth))},
		{"a bucket of one, soon", 1, true, 0, 60 / rate.Limit(math.Sqrt(fastGrowth))},
		{"a bucket of one, soon, with two others in flight", 1, true, 2, settle * 60},
		{"a bucket of twenty, soon", 20, true, 0, earlyCut * 60},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		start := time.Now().Add(-900 * time.Millisecond)
		for i := range tc.accepted {
			th.accepted = append(th.accepted, start.Add(time.Duration(i)*time.Millisecond))
		}
		th.observe(refusedRoundingUp, start.Add(500*time.Millisecond), 0)
		th.lastCut, th.sinceCut, th.pace = start, 5, 60 // climbed since, to 60 a second
		if tc.soon {
			th.lastCut = time.Now().Add(-minInterval / 2)
		}
		th.observe(refusedRoundingUp, time.Now(), tc.busy)
		if got := th.pace; math.Abs(float64(got-tc.want)) > 0.01 {
			t.Errorf("%s: after a climb refused at 60/s the pace is %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A larger bucket, refused at the top of the first climb, has its rate
// taken from what it accepted since its first 429 and what it wasted while
// full, as the climb started below its rate, whatever the step before,
// which its burst may have carried. What it wasted is found with the burst
// taken as what it accepted before the first 429, no less than its own, so
// its rate is never overstated. Each case offers a bucket what the climb
// sends (fastGrowth every half step) until it refuses one.
func TestThrottle_aRefusedClimbTakesABucketsRateFromWhatItRefilled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		rate  rate.Limit
		burst int
		from  rate.Limit // where the climb starts
	}{
		{"a bucket of ten at 50, from 20", 50, 10, 20},
		{"a bucket of ten at 50, from 35", 50, 10, 35},
		{"a bucket of five at 50, from 10", 50, 5, 10},
		{"a bucket of fifty at 50, from 35", 50, 50, 35},
		{"a bucket of ten at 30, from 10", 30, 10, 10},
	} {
		bucket := rate.NewLimiter(tc.rate, tc.burst)
		var accepted []time.Time
		at := time.Unix(0, 0)
		for bucket.AllowN(at, 1) { // the burst, at once
			accepted = append(accepted, at)
			at = at.Add(time.Millisecond)
		}
		first, firstBurst, pace := at, len(accepted), tc.from
		for step := first; ; {
			at = at.Add(time.Duration(float64(time.Second) / float64(pace)))
			if at.Sub(step) >= growthStep/2 {
				step, pace = at, pace*fastGrowth
			}
			if !bucket.AllowN(at, 1) {
				break
			}
			accepted = append(accepted, at)
		}
		// The same times, ending now, when the climb's refusal is answered.
		th := newThrottle(8, 0, 30*time.Second)
		shift := time.Until(at)
		for _, a := range accepted {
			th.accepted = append(th.accepted, a.Add(-shift))
		}
		th.firstBurst = firstBurst
		th.lastCut, th.firstEvent, th.pace, th.sinceCut = first.Add(-shift), first.Add(-shift), pace, 5
		th.observe(refusedRoundingUp, time.Now(), 0)
		if th.known < 0.9*tc.rate || th.known > 1.02*tc.rate {
			t.Errorf("%s: refused at %.0f a second, the rate is taken for %.1f, want %.0f, or up to a tenth less", tc.name, pace, th.known, tc.rate)
		}
		if got, want := th.pace, settle*th.known; math.Abs(float64(got-want)) > 0.01 {
			t.Errorf("%s: the pace is %v, want %v", tc.name, got, want)
		}
	}
}

// A window found spent reopens, if fixed, at the wall-clock second
// Retry-After points to, and if rolling, a second after the oldest request
// it counts. Until a probe tells which, requests are held until the earlier
// of the two, and the later is kept for a refused probe; once the kind is
// known, only its own time counts, and the pace is set at what such a
// window accepted, as each request also waits for a place in it.
func TestThrottle_aSpentWindowReopensAsItsKindWould(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	now := time.Date(2026, 11, 23, 12, 0, 3, 548e6, time.UTC)
	for i := range 60 { // 60 accepted from 2.948 to 3.538, 10 ms apart
		th.accepted = append(th.accepted, now.Add(-600*time.Millisecond+time.Duration(i)*10*time.Millisecond))
	}
	fixed := time.Date(2026, 11, 23, 12, 0, 4, 0, time.UTC).Add(windowMargin)
	rolling := now.Add(-600*time.Millisecond + time.Second + windowMargin)
	if got := th.reopening(now, time.Second, true); !got.Equal(rolling) || th.guess != rollingWindow || !th.otherwise.Equal(fixed) {
		t.Fatalf("held until %v guessing kind %d, otherwise %v; want %v, rolling (%d), otherwise %v", got, th.guess, th.otherwise, rolling, rollingWindow, fixed)
	}
	if th.spent[rollingWindow] != 60 || th.spent[fixedWindow] != 54 {
		t.Errorf("counted %d in the last second and %d since the wall-clock second, want 60 and 54", th.spent[rollingWindow], th.spent[fixedWindow])
	}
	th.learnWindow(otherWindow(th.guess), now) // the probe at the rolling time was refused
	if th.kind != fixedWindow || th.known != 54 || th.pace != 54 {
		t.Errorf("learnt window kind %d, known %v, pace %v; want fixed (%d), 54, 54", th.kind, th.known, th.pace, fixedWindow)
	}
	if got := th.reopening(now, time.Second, true); !got.Equal(fixed) || th.guess != unknownWindow {
		t.Errorf("a fixed window held until %v, guessing kind %d; want %v and no guess", got, th.guess, fixed)
	}
}

// A fixed window counts the requests of each wall-clock second: once its
// kind is known, a request waits for the next second, and windowMargin for
// the service's clock, when those let go since this one began (or within
// windowMargin before it) and not refused fill it, answered or not.
func TestThrottle_aFixedWindowWaitsForTheNextSecond(t *testing.T) {
	t.Parallel()
	if into := time.Since(time.Now().Truncate(time.Second)); into < 100*time.Millisecond || into > 800*time.Millisecond {
		time.Sleep(time.Second - into + 200*time.Millisecond) // well inside a second
	}
	th := newThrottle(8, 0, 30*time.Second)
	th.kind, th.known, th.pace = fixedWindow, 3, 1000
	sec := time.Now().Truncate(time.Second)
	// One let go in the second before, one just before this one, and one
	// in it.
	th.letGo = []time.Time{sec.Add(-30 * time.Millisecond), sec.Add(-10 * time.Millisecond), sec.Add(50 * time.Millisecond)}
	if wait := time.Until(th.due()); wait > 0 {
		t.Errorf("with two of three places taken, the next request waits %v", wait)
	}
	refused := sec.Add(60 * time.Millisecond)
	th.letGo = append(th.letGo, refused)
	if got, want := th.due(), sec.Add(time.Second+windowMargin); !got.Equal(want) {
		t.Errorf("with three taken, the next is due at %v, want %v", got, want)
	}
	th.observe(refusedRoundingUp, refused, 0)
	if slices.Contains(th.letGo, refused) {
		t.Errorf("a refused request still takes a place: %v", th.letGo)
	}
}

// A rolling window frees a place as each request it counts turns a second
// old: once its kind is known, a request waits for a free place, each
// request let go and not refused taking one, answered or not.
func TestThrottle_aRollingWindowWaitsForAPlace(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	th.kind, th.known, th.pace = rollingWindow, 3, 1000
	start := time.Now().Add(-500 * time.Millisecond)
	th.letGo = []time.Time{start.Add(-600 * time.Millisecond), start, start.Add(100 * time.Millisecond)}
	if wait := time.Until(th.due()); wait > 0 {
		t.Errorf("with two of three places taken, the next request waits %v", wait)
	}
	th.letGo = append(th.letGo, start.Add(200*time.Millisecond))
	if got, want := th.due(), start.Add(time.Second+windowMargin); !got.Equal(want) {
		t.Errorf("with three taken, the next is due at %v, want %v", got, want)
	}
	th.letGo = append(th.letGo, start.Add(300*time.Millisecond))
	if got, want := th.due(), start.Add(1100*time.Millisecond+windowMargin); !got.Equal(want) {
		t.Errorf("with four taken, the next is due at %v, want %v", got, want)
	}
}

// A bucket of one or two refuses two requests that scheduling brought
// closer together than its rate, even below it, and whatever rate was
// offered: a 429 a while after the last one steps the pace back by the
// settling margin only, whether the requests kept up with the pace or not,
// and from the rate the bucket was found to accept, not the pace: on a busy
// machine such 429s come every second or two, and each must not take the
// pace down a step further. One above that rate, probing, steps back from
// the pace refused.
func TestThrottle_aSmallBucketsRefusalAtAnAcceptedPaceStepsBackALittle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		pace     rate.Limit
		accepted int // in the second since the last 429
		want     rate.Limit
	}{
		{"nearly the pace", 48, 45, 49},
		{"much less", 48, 30, 49},
		{"the pace stepped back to", settle * 49, 45, 49},
		{"above the rate, probing", 50, 48, 50},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		last := time.Now().Add(-time.Second)
		th.smallBucket, th.known, th.pace, th.lastCut, th.sinceCut = true, 49, tc.pace, last, tc.accepted
		for i := range tc.accepted {
			th.accepted = append(th.accepted, last.Add(time.Duration(i+1)*time.Second/time.Duration(tc.accepted+1)))
		}
		th.observe(refusedRoundingUp, time.Now(), 0)
		if math.Abs(float64(th.known-tc.want)) > 0.5 || math.Abs(float64(th.pace-settle*th.known)) > 1e-9 {
			t.Errorf("%s: known %v and pace %v, want %v and %v", tc.name, th.known, th.pace, tc.want, settle*tc.want)
		}
	}
}

// Each request is spaced from when the one before it went on the wire: one
// that waited for a connection, or for the scheduler, after it was let go
// must not have the next follow it too closely. Until it is on the wire
// (or has failed), the next one waits for it.
func TestThrottle_spacesFromWhenTheLastRequestWentOnTheWire(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	th.setLimit(10, time.Now()) // paced: 100 ms apart
	release, sent, _, err := th.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if due := th.due(); !due.After(time.Now()) || due.Before(sent.Add(100*time.Millisecond)) {
		t.Errorf("with the last request not yet on the wire the next is due %v after it was let go", due.Sub(sent))
	}
	time.Sleep(20 * time.Millisecond)
	th.wrote(sent.Add(-time.Millisecond)) // an earlier request
	if !th.unwritten {
		t.Error("an earlier request going on the wire counted for the last one")
	}
	th.wrote(sent)
	if got := th.due().Sub(sent); got < 120*time.Millisecond {
		t.Errorf("the last request went on the wire 20 ms after it was let go, and the next is due %v after it was let go, want 120 ms at least", got)
	}
	select {
	case <-th.wake:
	default:
		t.Error("going on the wire did not wake a request waiting for it")
	}

	// One that fails before it is written no longer holds the next back.
	releaseFailed, failed, _, err := th.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer releaseFailed()
	th.landed(failed, false)
	if th.unwritten || th.due() != failed.Add(time.Duration(float64(time.Second)/float64(th.pace))) {
		t.Errorf("a request that failed before it was written still holds the next back: due %v after it", th.due().Sub(failed))
	}
}

// A bucket of one or two tells exactly whether a pace is above its rate, so
// after its climb is refused, its rate is narrowed down between the pace it
// held and the one it refused: a pace it refuses is the new upper bound, one
// it held for narrowHold while requests kept up is the new lower bound, and
// once the two are close, it is paced just below the one it held.
func TestThrottle_aSmallBucketsRateIsNarrowedDown(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	now := time.Now()
	th.smallBucket, th.lo, th.hi, th.pace, th.lastCut, th.sinceCut = true, 40, 60, 49, now.Add(-time.Second), 20

	th.observe(refusedRoundingUp, now, 0)
	if want := rate.Limit(math.Sqrt(40 * 49)); th.hi != 49 || math.Abs(float64(th.pace-want)) > 1e-9 {
		t.Fatalf("refused at 49/s: bounds %v–%v and pace %v, want 40–49 and %v", th.lo, th.hi, th.pace, want)
	}

	tried := th.pace
	th.stepStart, th.sent = now.Add(-narrowHold), 2 // the requests did not keep up
	th.grow(now)
	if th.pace != tried || th.lo != 40 {
		t.Fatalf("a pace the requests did not keep up with was taken as held: bounds %v–%v, pace %v", th.lo, th.hi, th.pace)
	}
	th.stepStart, th.sent = now.Add(-narrowHold), int(float64(tried)*narrowHold.Seconds())
	th.grow(now)
	if want := rate.Limit(math.Sqrt(float64(tried) * 49)); th.lo != tried || math.Abs(float64(th.pace-want)) > 1e-9 {
		t.Fatalf("held %v/s: bounds %v–%v and pace %v, want %v–49 and %v", tried, th.lo, th.hi, th.pace, tried, want)
	}

	for range 10 {
		if th.hi == 0 {
			break
		}
		th.stepStart, th.sent = now.Add(-narrowHold), 100
		th.grow(now)
	}
	if th.hi != 0 || th.lo != 0 || th.known < 47.5 || th.known > 49 || th.pace != heldMargin*th.known {
		t.Errorf("after holding every pace tried: bounds %v–%v, known %v, pace %v; want the narrowing over, just below 49", th.lo, th.hi, th.known, th.pace)
	}
}

// A service that takes one request late refuses the next one on time, if it
// is a bucket of one or two: the next is spaced from when the answer shows
// the service took the last one, when that is later than it went on the
// wire: by as much as the answer came later than the quickest, and no more
// than the 429s' answers varied by. A service whose 429s all come as quickly
// counts each request as it arrives, and works after: a late answer moves
// nothing. For other limiters, an answer's time changes nothing either.
func TestThrottle_aSmallBucketSpacesFromALateAnswer(t *testing.T) {
	t.Parallel()
	ok := &http.Response{StatusCode: http.StatusOK}
	for _, tc := range []struct {
		name    string
		small   bool
		refused []time.Duration // how long 429s took to be answered
		least   time.Duration   // that a late answer moves the next, at least
	}{
		{"a small bucket whose 429s came 1 to 60 ms from the wire", true, []time.Duration{time.Millisecond, 60 * time.Millisecond}, 30 * time.Millisecond},
		{"a small bucket whose 429s came as quickly", true, []time.Duration{time.Millisecond, time.Millisecond}, 0},
		{"a larger bucket", false, []time.Duration{time.Millisecond, 60 * time.Millisecond}, 0},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		th.smallBucket, th.refusedTook = tc.small, tc.refused
		th.setLimit(10, time.Now())
		for _, answer := range []time.Duration{time.Millisecond, 60 * time.Millisecond} {
			release, sent, _, err := th.acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			th.wrote(sent)
			wire := th.spacedFrom
			time.Sleep(answer)
			th.landed(sent, true)
			th.observe(ok, sent, 0)
			release()
			late := th.spacedFrom.Sub(wire)
			switch {
			case answer == time.Millisecond && late != 0:
				t.Errorf("%s: an answer as quick as the quickest moved the next request %v later", tc.name, late)
			case answer > time.Millisecond && tc.least > 0 && (late < tc.least || late > 60*time.Millisecond):
				t.Errorf("%s: an answer some 59 ms later than the quickest moved the next request %v later", tc.name, late)
			case answer > time.Millisecond && tc.least == 0 && late != 0:
				t.Errorf("%s: a late answer moved the next request %v later", tc.name, late)
			}
		}
	}
}

// A 429 to a request that went with more others on the wire than the
// service was seen to accept before is a limit on requests in flight, not
// on their rate: the client sends no more at once from then on, and unlearns
// the pace the 429s before had set. So is one where of the requests that
// went with as many, more were refused than accepted. Where more were
// accepted, or there are too few to tell, or only one other was on the
// wire, it is a rate.
func TestThrottle_tellsALimitOnRequestsInFlightFromARate(t *testing.T) {
	t.Parallel()
	upTo := func(most, n int) []wireBusy {
		b := make([]wireBusy, n)
		for i := range b {
			b[i] = wireBusy{time.Now(), i % (most + 1)}
		}
		return b
	}
	for _, tc := range []struct {
		name          string
		accepted      []wireBusy
		refused       int // 429s before, with as many others as busy
		busy          int
		learnt, limit int
	}{
		{"refused with 4 in flight, accepted with up to 3", upTo(3, 20), 0, 4, 0, 4},
		{"refused with 4 in flight, accepted with up to 5", upTo(5, 20), 0, 4, 0, 0},
		{"refused with 4 in flight, too few accepted to tell", upTo(3, 12), 0, 4, 0, 0},
		{"refused with 1 in flight, accepted with none", upTo(0, 20), 0, 1, 0, 0},
		{"refused with 5 in flight, let go before a limit of 4 was learnt", upTo(5, 20), 0, 5, 4, 4},
		{"refused with 3 in flight under a limit of 4 learnt", upTo(2, 20), 0, 3, 4, 3},
		{"refused with 3 in flight a third time, accepted so twice", append(upTo(2, 20), wireBusy{time.Now(), 3}, wireBusy{time.Now(), 4}), 2, 3, 0, 3},
		{"refused with 3 in flight a second time, accepted so twice", append(upTo(2, 20), wireBusy{time.Now(), 3}, wireBusy{time.Now(), 4}), 1, 3, 0, 0},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		th.inFlightCap = tc.learnt
		th.smallBucket, th.known, th.lastCut, th.pace = true, 30, time.Now().Add(-time.Second), 29
		th.busyOK = tc.accepted
		for range tc.refused {
			th.busyRefused = append(th.busyRefused, wireBusy{time.Now(), tc.busy})
		}
		sent := time.Now()
		th.observe(refusedRoundingUp, sent, tc.busy)
		switch {
		case th.inFlightCap != tc.limit:
			t.Errorf("%s: at most %d in flight, want %d", tc.name, th.inFlightCap, tc.limit)
		case tc.learnt == 0 && tc.limit > 0 && (th.pace != rate.Inf || th.known != 0 || th.smallBucket):
			t.Errorf("%s: the pace learnt from 429s before is kept: %v, known %v", tc.name, th.pace, th.known)
		case tc.limit == 0 && th.lastCut.Before(sent):
			t.Errorf("%s: taken as a rate refused, yet not as a refusal event", tc.name)
		case tc.limit > 0 && !th.lastCut.Before(sent):
			t.Errorf("%s: taken as a limit in flight, yet also as a rate refused", tc.name)
		}
	}

	// Once learnt, a request waits while that many are in flight, until one
	// is answered.
	th := newThrottle(8, 0, 30*time.Second)
	th.inFlightCap = 2
	var first time.Time
	for i := range 2 {
		_, sent, _, err := th.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = sent
		}
	}
	third := make(chan time.Time, 1)
	go func() {
		_, sent, _, _ := th.acquire(context.Background())
		third <- sent
	}()
	select {
	case <-third:
		t.Fatal("a third request went with the limit of 2 in flight reached")
	case <-time.After(100 * time.Millisecond):
	}
	answered := time.Now()
	th.landed(first, false)
	if sent := <-third; sent.Before(answered) {
		t.Errorf("the third request went at %v, before the first was answered at %v", sent, answered)
	}
}

// A 429 that came with many others on the wire before enough requests had
// been accepted to tell is taken for the rate, and told again once enough
// have been: should few of them have gone with as many others, the service
// limits requests in flight, and what was learnt from its 429s is undone.
// Should it then refuse a rate too, that 429 sets the pace, as a first one.
func TestThrottle_tellsA429TakenEarlyAgain(t *testing.T) {
	t.Parallel()
	ok := &http.Response{StatusCode: http.StatusOK}
	for _, tc := range []struct {
		name  string
		most  int // others on the wire with the requests accepted after
		limit int
	}{
		{"accepted after with up to 2 others", 2, 3},
		{"accepted after with up to 4 others", 4, 0},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		th.observe(refusedRoundingUp, time.Now(), 0) // the first
		for range 4 {
			th.observe(ok, time.Now(), 1)
		}
		th.observe(refusedRoundingUp, time.Now(), 3)
		if th.inFlightCap != 0 || th.unsure != 3 || th.pace == rate.Inf {
			t.Fatalf("%s: with 4 accepted, a 429 with 3 others was told at once: at most %d in flight, pace %v", tc.name, th.inFlightCap, th.pace)
		}
		paced := th.pace
		for i := range unsureHistory {
			th.observe(ok, time.Now(), i%(tc.most+1))
		}
		switch {
		case th.inFlightCap != tc.limit:
			t.Errorf("%s: at most %d in flight, want %d", tc.name, th.inFlightCap, tc.limit)
		case tc.limit > 0 && (th.pace != rate.Inf || th.known != 0 || !th.lastCut.IsZero()):
			t.Errorf("%s: the pace learnt from the 429s is kept: %v, known %v", tc.name, th.pace, th.known)
		case tc.limit == 0 && (th.pace != paced || th.unsure != 0):
			t.Errorf("%s: the pace moved from %v to %v, or the 429 is still to tell (%d)", tc.name, paced, th.pace, th.unsure)
		}
		if tc.limit == 0 {
			continue
		}
		th.observe(refusedRoundingUp, time.Now(), 0)
		if th.pace > 100 || th.lastCut.IsZero() {
			t.Errorf("%s: a 429 with no other in flight after the limit was learnt set the pace to %v, want at most the rate accepted", tc.name, th.pace)
		}
	}
}

// What the service finds in flight as a request reaches it is counted when
// the request goes on the wire, not when it is let go: one let go after
// another may reach the wire first.
func TestThrottle_countsTheOthersOnTheWire(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	var sent [3]time.Time
	for i := range 2 {
		_, at, busy, err := th.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if busy != i {
			t.Errorf("request %d let go with %d others in flight, want %d", i, busy, i)
		}
		sent[i] = at
	}
	if busy := th.wrote(sent[1]); busy != 0 {
		t.Errorf("the second request reached the wire first with %d others on it", busy)
	}
	if busy := th.wrote(sent[0]); busy != 1 {
		t.Errorf("the first reached it after the second with %d others on it, want 1", busy)
	}
	th.landed(sent[1], true)
	_, at, _, err := th.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sent[2] = at
	if busy := th.wrote(sent[2]); busy != 1 {
		t.Errorf("the third reached it with %d others on it, want the first", busy)
	}
	th.landed(sent[0], true)
	th.landed(sent[2], true)
	if th.onWire != 0 || th.inFlight != 0 {
		t.Errorf("all answered: %d on the wire, %d in flight", th.onWire, th.inFlight)
	}
}

// Around the rate it last accepted, the pace is probed upwards after a
// quiet spell. A bucket's measured rate is approached after the short one,
// up to just under it (heldMargin), and probed past only after four times
// as long, as each time a probe finds it again a request waits out a
// Retry-After; so is a small bucket's. One guessed by an early cut is
// probed after the short quiet.
func TestThrottle_probesPastAMeasuredRateAfterALongerQuiet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		small, cutEarly bool
		quiet           time.Duration
		from, upTo      rate.Limit // the pace, against the rate last accepted, 50, and after a step, at most
		grows           bool
	}{
		{false, false, time.Second, settle * 50, settle * 50, false},
		{false, false, 3 * time.Second, settle * 50, heldMargin * 50, true},
		{false, false, 3 * time.Second, heldMargin * 50, heldMargin * 50, false},
		{false, false, 9 * time.Second, heldMargin * 50, 51, true},
		{false, true, time.Second, settle * 50, settle * 50, false},
		{false, true, 3 * time.Second, settle * 50, 50, true},
		{true, false, 3 * time.Second, heldMargin * 50, heldMargin * 50, false},
		{true, false, 9 * time.Second, heldMargin * 50, 51, true},
		{true, true, 3 * time.Second, heldMargin * 50, heldMargin * 50, false},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		now := time.Now()
		th.smallBucket, th.cutEarly, th.known, th.lastCut = tc.small, tc.cutEarly, 50, now.Add(-tc.quiet)
		th.setLimit(tc.from, now.Add(-growthStep))
		th.sent = 10
		th.grow(now)
		if grew := th.pace > tc.from; grew != tc.grows || th.pace > tc.upTo+1e-9 {
			t.Errorf("small bucket %v, cut early %v, %v after the last 429, at %.2f: pace %.3f, want it grown %v, to %.2f at most",
				tc.small, tc.cutEarly, tc.quiet, tc.from, th.pace, tc.grows, tc.upTo)
		}
	}
}

// A window's count, which each request waits for a place in, is what it
// accepted when found spent, and only a 429 lowers it: it grows with the
// pace, which probes past it after four times the quiet, as past a small
// bucket's rate, so that a count learnt from a second that accepted few
// requests does not hold every request to it for good.
func TestThrottle_aWindowsCountGrowsAfterQuietWindows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		quiet time.Duration
		grows bool
	}{
		{3 * time.Second, false},
		{9 * time.Second, true},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		now := time.Now()
		th.kind, th.known, th.lastCut = rollingWindow, 50, now.Add(-tc.quiet)
		th.setLimit(50, now.Add(-growthStep))
		th.sent = 10
		th.grow(now)
		if grew := th.pace > 50 && th.known == th.pace; grew != tc.grows {
			t.Errorf("a window %v after the last 429: pace %v and count %v, grown %v, want %v", tc.quiet, th.pace, th.known, grew, tc.grows)
		}
	}
}

// A request let go at the pace reaches the wire a little late (the timer
// fires late, the transport takes a moment): the next is let go that much
// early, as usual of late, so that requests reach the wire one interval
// apart; never by more than a tenth of it.
func TestThrottle_letsGoEarlyByTheUsualLag(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	th.setLimit(100, time.Now()) // paced: 10 ms apart
	for range 3 {
		release, sent, _, err := th.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
		th.wrote(sent)
		th.landed(sent, true)
		release()
	}
	if th.lag <= 0 || th.lag > maxLag {
		t.Fatalf("after requests reached the wire 1 ms or more late, the lag is %v", th.lag)
	}
	if got, want := th.spacedFrom.Add(10*time.Millisecond).Sub(th.due()), th.lag; got != want {
		t.Errorf("the next is let go %v early, want the lag, %v", got, want)
	}
	th.lag = time.Second
	if got := th.spacedFrom.Add(10 * time.Millisecond).Sub(th.due()); got != time.Millisecond {
		t.Errorf("with a lag of a second, the next is let go %v early, want a tenth of the interval", got)
	}
}

// A bucket of one climbs a step each time a request spaced at the pace is
// accepted, not by time: at the slow paces the climb starts from, a step of
// time passes with no request sent at it, and the pace it tried would be
// taken as one the bucket accepted. Nor by the first request after the
// 429: the bucket counts from the last request it took, which that one
// follows by more than the pace (a bucket of one at 30 a second accepted
// it at the climb's start of 32, whose rate was then narrowed down to 32,
// and paced at 25 for the rest of a plan).
func TestThrottle_aSmallBucketClimbsAStepPerRequestAccepted(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	first := time.Now()
	th.accepted = []time.Time{first}
	th.observe(refusedRoundingUp, first, 0) // the second request: a bucket of one
	th.lastSent, th.spacedFrom, th.wireAt = first, first, first
	if !th.smallBucket || th.pace != 32 {
		t.Fatalf("after a bucket of one's first 429: small %v, pace %v, want 32 per second", th.smallBucket, th.pace)
	}
	th.grow(th.stepStart.Add(time.Second))
	if th.pace != 32 {
		t.Fatalf("the pace grew to %v with no request sent at 32 per second", th.pace)
	}
	release, sent, busy, err := th.acquire(context.Background()) // waits for the pace
	if err != nil {
		t.Fatal(err)
	}
	th.wrote(sent)
	th.grow(time.Now())
	if th.pace != 32 {
		t.Fatalf("the pace grew to %v before the request sent at it was answered", th.pace)
	}
	th.landed(sent, true)
	th.observe(&http.Response{StatusCode: http.StatusOK}, sent, busy)
	release()
	th.grow(time.Now())
	if th.pace != 32 {
		t.Fatalf("the pace grew to %v when the request after the 429 was accepted", th.pace)
	}
	release, sent, busy, err = th.acquire(context.Background()) // one pace after an accepted one
	if err != nil {
		t.Fatal(err)
	}
	th.wrote(sent)
	th.landed(sent, true)
	th.observe(&http.Response{StatusCode: http.StatusOK}, sent, busy)
	release()
	th.grow(time.Now())
	if want := 32 * rate.Limit(fastGrowth); math.Abs(float64(th.pace-want)) > 0.01 {
		t.Errorf("after a request at 32 per second was accepted, following an accepted one, the pace is %v, want %v", th.pace, want)
	}
}

// Only a bucket of one is climbed a step per request: it took the requests
// it accepted one at a time, each further from the one before than the
// refused one from the last. A bucket of two, or a window, took two as
// closely as it refused the third.
func TestThrottle_oneAtATime(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ms := func(d float64) time.Time { return now.Add(-time.Duration(d * float64(time.Millisecond))) }
	for _, tc := range []struct {
		name     string
		accepted []time.Time
		want     bool
	}{
		{"nothing accepted", nil, true},
		{"one accepted, the second refused", []time.Time{ms(0.2)}, true},
		{"Terraform's list, then a read, the next refused", []time.Time{ms(74), ms(2)}, true},
		{"two accepted at once, the third refused", []time.Time{ms(0.4), ms(0.2)}, false},
		{"a list long ago, then two at once", []time.Time{ms(900), ms(0.4), ms(0.2)}, false},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		th.accepted = tc.accepted
		if got := th.oneAtATime(now); got != tc.want {
			t.Errorf("%s: oneAtATime = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A bucket of one or two that refuses the request paced after its first
// 429 is slower than the climb's start: the pace halves, down to one a
// second, rather than the bucket being held back as a window spent (which
// would pace it at what it accepted in the last second: one request).
func TestThrottle_aSlowSmallBucketHalvesThePace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		busy  int // others in flight when the first 429's request was let go
		paces []rate.Limit
	}{
		{0, []rate.Limit{32, 16, 8, 4, 2, 1}},
		// On a loaded machine, a bucket of one's first 429 can come with
		// two others in flight: its climb is then the 50 ms one, from 8.
		{2, []rate.Limit{8, 4, 2, 1}},
	} {
		th := newThrottle(8, 0, 30*time.Second)
		th.accepted = []time.Time{time.Now()}
		th.observe(refusedRoundingUp, time.Now(), tc.busy)
		for i, want := range tc.paces {
			if i > 0 {
				th.observe(refusedRoundingUp, time.Now(), 0)
			}
			th.mu.Lock()
			pace, windowed, paused := th.pace, th.windowed, th.pausedUntil
			th.mu.Unlock()
			if pace != want || windowed || !paused.IsZero() {
				t.Fatalf("first 429 with %d in flight: pace %v, windowed %v, paused until %v; want %v, not a window", tc.busy, pace, windowed, paused, want)
			}
		}
		th.observe(refusedRoundingUp, time.Now(), 0)
		if !th.windowed {
			t.Errorf("first 429 with %d in flight: refused at one request a second too, and not held back as a window spent", tc.busy)
		}
	}
}

// A request waiting for a slow pace looks again at each step of the climb,
// and goes once the pace grown allows, not when the pace it first saw did:
// from one a second, it would otherwise wait the full second.
func TestThrottle_aWaitingRequestGoesAsThePaceClimbs(t *testing.T) {
	t.Parallel()
	th := newThrottle(8, 0, 30*time.Second)
	now := time.Now()
	th.setLimit(1, now) // one a second
	th.lastSent, th.spacedFrom = now, now
	release, _, _, err := th.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	release()
	// Each 100 ms step grows the pace by 1.4: the interval falls below the
	// time waited at the fifth step, 500 ms in; without looking again, it
	// waits the full second.
	if waited := time.Since(now); waited > 850*time.Millisecond {
		t.Errorf("the request waited %v, as if the pace had not climbed meanwhile", waited)
	}
	if th.pace <= 1 {
		t.Errorf("the pace is %v, want it grown", th.pace)
	}
}

func TestThrottle_adaptsToTheServicesRateLimit(t *testing.T) {
	t.Parallel()
	_, s := throttleAgainst(t, standin.Options{RateLimit: 50})
	if limited, total := s.Limited.Load(), s.Requests.Load(); limited*10 > total {
		t.Errorf("%d of %d requests answered 429", limited, total)
	}
}

// A service that halves its limit mid-plan is followed down: every read
// succeeds, and the pace ends nearer the lowered limit (25 per second) than
// the first one (50); around the lowered one, it probes gently.
func TestThrottle_followsALimitLoweredMidPlan(t *testing.T) {
	t.Parallel()
	c, _ := throttleAgainst(t, standin.Options{RateLimit: 50, RateBurst: 10, RateDropAfter: 60})
	if pace := paceOf(c); pace >= 37.5 {
		t.Errorf("the pace ends at %.1f requests per second, nearer the first limit of 50 than the lowered 25", float64(pace))
	}
}

// So is a window that halves its count, fixed or rolling: once its kind is
// known, each request waits for a place in it (due), and the count it
// waits for must follow the window down.
func TestThrottle_followsAWindowLoweredMidPlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts standin.Options
	}{
		{"fixed", standin.Options{RateLimit: 50, RateWindow: true, RateDropAfter: 110}},
		{"rolling", standin.Options{RateLimit: 50, RateSliding: true, RateDropAfter: 110}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, s := readsAgainst(t, 200, tc.opts)
			c.throttle.mu.Lock()
			known := c.throttle.known
			c.throttle.mu.Unlock()
			if known >= 37.5 {
				t.Errorf("the window's count ends at %.1f, nearer the first of 50 than the lowered 25", float64(known))
			}
			if limited, total := s.Limited.Load(), s.Requests.Load(); limited*10 > total {
				t.Errorf("%d of %d requests answered 429", limited, total)
			}
			t.Logf("count %.1f, pace %.1f, %d of %d answered 429", float64(known), float64(paceOf(c)), s.Limited.Load(), s.Requests.Load())
		})
	}
}

// So is a bucket of one that halves its limit while its rate is narrowed
// down, or after.
func TestThrottle_followsASmallBucketsLimitLoweredMidPlan(t *testing.T) {
	t.Parallel()
	for _, after := range []int{30, 90} {
		t.Run(fmt.Sprintf("after %d requests", after), func(t *testing.T) {
			t.Parallel()
			c, s := throttleAgainst(t, standin.Options{RateLimit: 50, RateBurst: 1, RateDropAfter: after})
			pace := paceOf(c)
			if pace >= 37.5 {
				t.Errorf("the pace ends at %.1f requests per second, nearer the first limit of 50 than the lowered 25", float64(pace))
			}
			if limited, total := s.Limited.Load(), s.Requests.Load(); limited*10 > total {
				t.Errorf("%d of %d requests answered 429", limited, total)
			}
			t.Logf("pace %.1f, %d of %d answered 429", float64(pace), s.Limited.Load(), s.Requests.Load())
		})
	}
}

// Small limits are not hammered either, whether a window of a few a second
// or a bucket of one that slow: both refuse the second request, so both
// start as a bucket of one or two, and a window must not then be narrowed
// down as one (it accepts a run at any pace until it is spent). Nor is the
// bucket held back as a window: paced at the one request a second it
// accepted in its first second, it took four times as long.
func TestThrottle_doesNotHammerASmallLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts standin.Options
		// At most one request in this many is answered 429; the
		// misreading this guards against refused 7 of 31. The bucket's
		// rate is found by halving the pace twice, then narrowed down
		// between 4 and 5.6, each pace tried above 4 refused: 8 of 32
		// here.
		refused int64
	}{
		{"a window of 4 a second", standin.Options{RateLimit: 4, RateWindow: true}, 5},
		{"a bucket of one at 4 a second", standin.Options{RateLimit: 4, RateBurst: 1}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, s := readsAgainst(t, 24, tc.opts)
			limited, total := s.Limited.Load(), s.Requests.Load()
			if limited*tc.refused > total {
				t.Errorf("%d of %d requests answered 429", limited, total)
			}
			pace := paceOf(c)
			if pace < 3 {
				t.Errorf("the pace ends at %.1f requests per second, want 3 or more", float64(pace))
			}
			t.Logf("pace %.1f, %d of %d answered 429", float64(pace), limited, total)
		})
	}
}

// A bucket of one as slow as many services allow (10 a second) is paced
// near its rate, not as a window that accepted one request in its first
// second (one a second), and with few requests refused. Near is 9.8 here,
// as low as 5.8 on a loaded machine under -race: at least half. Few is the
// search for the rate's 5 or 6 of some 45 here, up to 12 of 52 on a loaded
// machine: one in four at most.
func TestThrottle_pacesASlowBucketOfOne(t *testing.T) {
	t.Parallel()
	c, s := readsAgainst(t, 40, standin.Options{RateLimit: 10, RateBurst: 1})
	pace := paceOf(c)
	if pace < 5 || pace > 10 {
		t.Errorf("the pace ends at %.1f requests per second, want 5 to 10", float64(pace))
	}
	if limited, total := s.Limited.Load(), s.Requests.Load(); limited*4 > total {
		t.Errorf("%d of %d requests answered 429", limited, total)
	}
	t.Logf("pace %.1f, %d of %d answered 429", float64(pace), s.Limited.Load(), s.Requests.Load())
}

// A service that limits requests in flight, not their rate, has the client
// send no more at once than it accepts, rather than pace them: no pace is
// learnt from its 429s, and few requests are refused. Not in parallel: the
// throttle tells such a limit by when answers come on the real clock, and
// the package's other tests beside it, under -race, delay them unevenly.
func TestThrottle_learnsALimitOnRequestsInFlight(t *testing.T) {
	c, s := throttleAgainst(t, standin.Options{MaxInFlight: 3, Work: 100 * time.Millisecond})
	c.throttle.mu.Lock()
	limit, pace := c.throttle.inFlightCap, c.throttle.pace
	c.throttle.mu.Unlock()
	if limit < 2 || limit > 3 || pace < 50 {
		t.Errorf("at most %d in flight, paced at %.1f per second; want 3 (or 2), and no pace (or one far above what 3 in flight bring)", limit, float64(pace))
	}
	if limited, total := s.Limited.Load(), s.Requests.Load(); limited*10 > total {
		t.Errorf("%d of %d requests answered 429", limited, total)
	}
}

// A service that answers its rate limit with 403 and GitHub's headers (no
// Retry-After; X-RateLimit-Remaining: 0 and the reset as a Unix time) is
// paced and waited out like one that answers 429: every read succeeds.
func TestThrottle_pacesARateLimitAnsweredWith403(t *testing.T) {
	t.Parallel()
	_, s := throttleAgainst(t, standin.Options{RateLimit: 50, RateBurst: 10, LimitStatus: http.StatusForbidden, RetryAfterForm: "reset"})
	if limited, total := s.Limited.Load(), s.Requests.Load(); limited == 0 || limited*10 > total {
		t.Errorf("%d of %d requests answered 403 for the rate limit; want some, and few", limited, total)
	}
}

// throttleAgainst is readsAgainst with 150 profiles.
func throttleAgainst(t *testing.T, opts standin.Options) (*Client, *standin.Server) {
	t.Helper()
	return readsAgainst(t, 150, opts)
}

// paceOf is the pace c's throttle ends at.
func paceOf(c *Client) rate.Limit {
	c.throttle.mu.Lock()
	defer c.throttle.mu.Unlock()
	return c.throttle.pace
}

// readsAgainst reads n profiles at once, through one client, from the
// stand-in limited by opts, and checks that every read succeeds.
func readsAgainst(t *testing.T, n int, opts standin.Options) (*Client, *standin.Server) {
	t.Helper()
	c, s := standinClient(t, n, opts)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(context.Background(), fmt.Sprintf("bp_gen_%07d", i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return c, s
}

// A quota the service announces on every answer, in either family, is
// obeyed before any refusal: reads wait for the window's reset instead of
// being refused.
func TestThrottle_obeysAnAnnouncedQuota(t *testing.T) {
	t.Parallel()
	for _, family := range []string{"github", "ietf"} {
		t.Run(family, func(t *testing.T) {
			t.Parallel()
			_, s := readsAgainst(t, 30, standin.Options{Quota: 12, QuotaWindow: 400 * time.Millisecond, Announce: family})
			if s.Limited.Load() != 0 {
				t.Errorf("%d of %d requests refused", s.Limited.Load(), s.Requests.Load())
			}
		})
	}
}
