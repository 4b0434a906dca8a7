package client

import (
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// The token is masked before a body is cut to its excerpt, so no part of it
// survives at the cut.
func TestExcerpt_masksBeforeCutting(t *testing.T) {
	t.Parallel()
	r := redact.New(testToken)
	for pad := excerptLimit - 20; pad <= excerptLimit+2; pad++ {
		body := strings.Repeat("x", pad) + testToken + strings.Repeat(" ", 50) + "tail"
		got := excerpt([]byte(body), r)
		for i := 0; i+6 <= len(testToken); i++ {
			if part := testToken[i : i+6]; strings.Contains(got, part) {
				t.Errorf("pad %d: %q of the token survived: %q", pad, part, got)
			}
		}
	}
}
