package pace

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCalibration_virtual prints the simulation's figures for the rows
// that internal/client's TestCalibration_real runs through the real
// limiters they are named for, for the two to be set side by side in the
// body of a commit that changes either. It runs only with PACE_CALIBRATE=1.
func TestCalibration_virtual(t *testing.T) {
	if os.Getenv("PACE_CALIBRATE") == "" {
		t.Skip("PACE_CALIBRATE=1 prints the simulation's rows that have real limiters")
	}
	rows := []limiterCase{
		{name: "bucket burst 10, no Retry-After (nginx limit_req, burst 10)", new: func() limiter { return silent{newBucket(50, 10)} },
			least: perSecond(50, simReads+1-10)},
		{name: "bucket 50, burst 20 queued (nginx limit_req, burst 20)", new: func() limiter { return newQueued(50, 20) },
			least: perSecond(50, simReads)},
		{name: "bucket burst 1, no Retry-After (nginx limit_req, no burst)", new: func() limiter { return silent{newBucket(50, 1)} },
			least: perSecond(50, simReads), oneAtATime: true},
		{name: "HAProxy's rate, no Retry-After (HAProxy http_req_rate)", new: func() limiter { return silent{&periodRate{n: 50}} },
			least: perSecond(50, simReads+1)},
		{name: "HAProxy's rate, Retry-After: 1 (HAProxy http_req_rate, hdr Retry-After 1)", new: func() limiter { return &periodRate{n: 50} },
			least: perSecond(50, simReads+1)},
	}
	var b strings.Builder
	b.WriteString("| row | network | median | worst | refused |\n|---|---|---|---|---|\n")
	for _, n := range networks {
		for _, c := range rows {
			f := c.figures(n.net, func(c Clock) simPacer { return defaultPacer(c) })
			fmt.Fprintf(&b, "| %s | %s | %.2fx | %.2fx | %.1f%% |\n", c.name, n.name, f.median, f.worst, f.refused)
		}
	}
	t.Log("\n" + b.String())
}

// TestCalibration_virtualFleets prints the simulation's fleets behind the
// limiters internal/client's TestCalibration_realFleets runs for real: K
// plans on a quiet machine sharing one state, five fleets a row, the
// median and worst fleet against the ideal and the median share refused.
// It runs only with PACE_CALIBRATE=1.
func TestCalibration_virtualFleets(t *testing.T) {
	if os.Getenv("PACE_CALIBRATE") == "" {
		t.Skip("PACE_CALIBRATE=1 prints the simulation's fleets that have real limiters")
	}
	var b strings.Builder
	b.WriteString("| row | K | median | worst | refused |\n|---|---|---|---|---|\n")
	for _, c := range fleetCases {
		if c.name != "nginx" && c.name != "HAProxy" {
			continue
		}
		for _, k := range []int{8, 16} {
			var ratios, shares []float64
			for seed := range uint64(calibrationFleets) {
				r, s := runFleet(seed, k, c.new(), quiet, true)
				ratios, shares = append(ratios, r), append(shares, s)
				t.Logf("%s, K = %d, fleet %d: %.2fx, %.1f%% refused", c.name, k, seed, r, s)
			}
			slices.Sort(ratios)
			slices.Sort(shares)
			fmt.Fprintf(&b, "| %s | %d | %.2fx | %.2fx | %.1f%% |\n", c.name, k,
				ratios[len(ratios)/2], ratios[len(ratios)-1], shares[len(shares)/2])
		}
	}
	t.Log("\n" + b.String())
}

// calibrationFleets is how many fleets a row of the fleets' calibration
// runs, real or virtual.
const calibrationFleets = 5
