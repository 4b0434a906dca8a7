package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceredis"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceshare"
)

// A default a user can read is stated in the code once; every hand-written
// page that repeats it, or a figure derived from it, is held to the
// constant here. Each pattern must be found, so that a page reworded
// round a default fails too, and is brought back under the check.

// stated is one place a page states a default: the page, a pattern whose
// groups are the figures, and what the code says they are.
type stated struct {
	page, pattern string
	want          []string
}

func n(v int) string { return strconv.Itoa(v) }

func secs(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }

// spoken is a duration as the guides write it.
func spoken(d time.Duration) string {
	words := map[time.Duration]string{
		250 * time.Millisecond: "a quarter of a second", time.Second: "a second", 5 * time.Second: "five seconds",
		30 * time.Second: "thirty seconds", time.Hour: "an hour",
	}
	if w, ok := words[d]; ok {
		return w
	}
	return d.String() // no words for it: the page's words will not match
}

// backoffRanges is the sentence's list of the back-off's ranges after an
// outage with the defaults (client.waits): base min_wait·2^i, to twice
// the base, both within max_wait.
func backoffRanges() string {
	var r []string
	for i := range client.DefaultMaxRetries {
		base := min(client.DefaultMinWait<<i, client.DefaultMaxWait)
		r = append(r, fmt.Sprintf("%s-%s s", secs(base), secs(min(2*base, client.DefaultMaxWait))))
	}
	return strings.Join(r[:len(r)-1], ", ") + " and " + r[len(r)-1]
}

func statedDefaults() []stated {
	idx, guide := "templates/index.md.tmpl", "templates/guides/many-runs-at-once.md.tmpl"
	return []stated{
		{"README.md", "| `max_retries` | | (\\d+) |", []string{n(client.DefaultMaxRetries)}},
		{"README.md", "| `min_wait_seconds` / `max_wait_seconds` | | (\\d+) / (\\d+) |",
			[]string{secs(client.DefaultMinWait), secs(client.DefaultMaxWait)}},
		{"README.md", "| `request_timeout_seconds` | | (\\d+) |", []string{secs(client.DefaultTimeout)}},
		{"README.md", "| `max_concurrent_requests` | | (\\d+) |", []string{n(client.DefaultMaxConcurrent)}},
		{"README.md", "| `max_response_megabytes` | | (\\d+) |", []string{n(client.DefaultMaxBodyBytes >> 20)}},
		{"README.md", "leaves each run at its share of the pace within (\\d+) ms", []string{n(int(paceredis.StepWait / time.Millisecond))}},
		{idx, "up to `max_retries` times \\(default (\\d+)\\)", []string{n(client.DefaultMaxRetries)}},
		{idx, "`min_wait_seconds` \\(default (\\d+)\\)", []string{secs(client.DefaultMinWait)}},
		{idx, "`max_wait_seconds` \\(default (\\d+)\\)", []string{secs(client.DefaultMaxWait)}},
		{idx, "counts a quarter of one of `max_retries`: (\\d+) with the defaults",
			[]string{n(client.RefusalsPerRetry * client.DefaultMaxRetries)}},
		{idx, "With the defaults, the waits fall in ([-0-9s, and]+)\\.", []string{backoffRanges()}},
		{idx, "`request_timeout_seconds` \\(default (\\d+)\\)", []string{secs(client.DefaultTimeout)}},
		{idx, "`max_concurrent_requests` \\(default (\\d+)\\)", []string{n(client.DefaultMaxConcurrent)}},
		{guide, "PBKDF2 \\(([\\d,]+) rounds of SHA-256\\)", []string{thousands(paceredis.NameIterations)}},
		{guide, "every key expires (an hour) after its last use", []string{spoken(paceredis.KeepUnused)}},
		{guide, "a step that Redis has not answered within (a quarter of a second)", []string{spoken(paceredis.StepWait)}},
		{guide, "holds no other run's request for more than (a second)", []string{spoken(pace.BusyFor + paceshare.LockWait)}},
		{guide, "Redis is asked again after (a second), then after twice as long at each failure in a row, up to (thirty seconds)",
			[]string{spoken(paceredis.Away), spoken(paceredis.AwayMost)}},
		// The attribute's doc, in the schema (provider.go), as generated.
		{"docs/index.md", "does not answer within (a quarter of a second) leaves each run at its share of the pace, with a debug log line, and is asked again after (a second), then up to (thirty);",
			[]string{spoken(paceredis.StepWait), spoken(paceredis.Away), strings.TrimSuffix(spoken(paceredis.AwayMost), " seconds")}},
		{"ARCHITECTURE.md", "PBKDF2-SHA256 \\(([\\d,]+) rounds", []string{thousands(paceredis.NameIterations)}},
		{"ARCHITECTURE.md", "longer than `StepWait` \\((\\d+) ms\\)", []string{n(int(paceredis.StepWait / time.Millisecond))}},
	}
}

// thousands writes n with commas, as the pages do.
func thousands(v int) string {
	s := strconv.Itoa(v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestDocs_defaultsMatchTheCode: every default the hand-written pages
// state, and every figure they derive from one, is the code's.
func TestDocs_defaultsMatchTheCode(t *testing.T) {
	pages := map[string]string{}
	for _, s := range statedDefaults() {
		text, ok := pages[s.page]
		if !ok {
			b, err := os.ReadFile(s.page)
			if err != nil {
				t.Fatal(err)
			}
			text = strings.Join(strings.Fields(string(b)), " ") // lines folded anywhere
			pages[s.page] = text
		}
		re := regexp.MustCompile(literalBut(s.pattern))
		m := re.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("%s no longer says %q: state the default there as the code does, or change this check", s.page, s.pattern)
			continue
		}
		if got := m[1:]; strings.Join(got, "|") != strings.Join(s.want, "|") {
			t.Errorf("%s says %q where the code's defaults make %q (%s)", s.page, got, s.want, s.pattern)
		}
	}
}

// literalBut quotes the pattern's text but its groups and the escapes the
// table writes (\\d, \\(, \\)): the pages' backticks, pipes and brackets
// are text.
func literalBut(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			i++
		case c == '(' || c == ')':
			b.WriteByte(c)
		case c == '[':
			j := strings.IndexByte(p[i:], ']')
			b.WriteString(p[i : i+j+1])
			i += j
		case c == '+' && i > 0 && (p[i-1] == ']' || p[i-1] == 'd'):
			b.WriteByte(c)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}
