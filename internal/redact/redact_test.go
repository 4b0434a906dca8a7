package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// awkwardTokens hold the characters that each escaping changes.
var awkwardTokens = []string{
	"tok/SECRET+9f8e&x=Q1w2E3r4",
	"bp_live_4f7c9a2e1d6b8035",
	`a"b\c<d>e'f%g#h?i=j;k,l`,
	"Zm9vYmFy+/==",
}

// echoes are the forms in which services and proxies have been seen to echo
// a token back.
func echoes(tok string) map[string]string {
	bearer := "Bearer " + tok
	jsonText := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return map[string]string{
		"literal":                `{"received":"` + tok + `"}`,
		"bearer":                 bearer,
		"base64":                 base64.StdEncoding.EncodeToString([]byte(tok)),
		"base64 bearer":          base64.StdEncoding.EncodeToString([]byte(bearer)),
		"base64url bearer":       base64.RawURLEncoding.EncodeToString([]byte("Authorization: " + bearer)),
		"base64 inside text":     "auth=" + base64.StdEncoding.EncodeToString([]byte("user:"+tok)) + ";",
		"query escaped":          "?access_token=" + url.QueryEscape(tok) + "&page=2",
		"query escaped bearer":   url.QueryEscape(bearer),
		"path escaped":           "/x/" + url.PathEscape(tok),
		"lower-case hex":         regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(tok), strings.ToLower),
		"json":                   jsonText(tok),
		"json slash-escaped":     strings.ReplaceAll(jsonText(tok), "/", `\/`),
		"json unicode":           jsonUnicode(tok),
		"html":                   html.EscapeString(tok),
		"html numeric":           standin.HTMLNumeric(tok),
		"double percent":         url.QueryEscape(url.QueryEscape(tok)),
		"json of query escaped":  jsonText(url.QueryEscape(bearer)),
		"html of json":           html.EscapeString(jsonText(tok)),
		"cut at the end":         strings.Repeat("x", 40) + tok[:len(tok)-3],
		"cut at the start":       tok[3:] + " and more",
		"status line":            `malformed HTTP status code "` + tok + `"`,
		"in a request id header": "Bearer " + tok + strings.Repeat("z", 50),
	}
}

func jsonUnicode(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	return b.String()
}

// survivingPart returns a part of tok of 8 or more characters found in s, or "".
func survivingPart(s, tok string) string {
	for n := len(tok); n >= 8; n-- {
		for i := 0; i+n <= len(tok); i++ {
			if strings.Contains(s, tok[i:i+n]) {
				return tok[i : i+n]
			}
		}
	}
	return ""
}

func TestRedact_masksEveryEchoedForm(t *testing.T) {
	t.Parallel()
	for _, tok := range awkwardTokens {
		r := New(tok)
		for name, echo := range echoes(tok) {
			got := r.Redact(echo)
			if part := survivingPart(got, tok); part != "" {
				t.Errorf("token %q, %s: %q survives in %q (from %q)", tok, name, part, got, echo)
			}
			for _, enc := range []string{base64.StdEncoding.EncodeToString([]byte(tok)), url.QueryEscape(tok)} {
				if len(enc) >= 12 && strings.Contains(got, enc[2:len(enc)-4]) {
					t.Errorf("token %q, %s: an encoded form survives in %q", tok, name, got)
				}
			}
			if !strings.Contains(got, Mask) {
				t.Errorf("token %q, %s: nothing masked in %q", tok, name, got)
			}
		}
	}
}

func TestRedact_leavesOtherTextAlone(t *testing.T) {
	t.Parallel()
	r := New("tok/SECRET+9f8e&x=Q1w2E3r4")
	for _, s := range []string{`{"error":"invalid or revoked token"}`, "GET https://api.example.com/api/v1/browsers?page=2", "café & crème", "%zz \\uZZZZ &nope;"} {
		if got := r.Redact(s); got != s {
			t.Errorf("Redact(%q) = %q", s, got)
		}
	}
}

// Addresses show their query values, so that the failing page can be
// told, with the token masked where a value carries it; never user
// information or a fragment.
func TestRedactURL_showsQueryValuesMaskingTheToken(t *testing.T) {
	t.Parallel()
	r := New("tok-abcdef123456")
	u, _ := url.Parse("https://user:pw@api.example.com/api/v1/browsers?access_token=tok-abcdef123456&page=2&cursor=Y3Vyc29y#frag")
	if got, want := r.RedactURL(u), "https://api.example.com/api/v1/browsers?access_token=***&page=2&cursor=Y3Vyc29y"; got != want {
		t.Errorf("RedactURL = %q, want %q", got, want)
	}
	u, _ = url.Parse("https://api.example.com/api/v1/tok-abcdef123456/browsers")
	if got := r.RedactURL(u); strings.Contains(got, "abcdef") {
		t.Errorf("RedactURL = %q", got)
	}
}

// A token shorter than eight characters is masked in outside text only
// where it stands alone, and never in the base address the user set.
func TestRedact_shortTokensOnlyWhereTheyStandAlone(t *testing.T) {
	t.Parallel()
	for tok, cases := range map[string]map[string]string{
		"t": {
			"Bearer t":                       "Bearer ***",
			`{"token":"t","detail":"the t"}`: `{"token":"***","detail":"the ***"}`,
			"The response has a shape":       "The response has a shape",
		},
		"api": {
			"invalid token api!": "invalid token ***!",
			"rapid":              "rapid",
			"YXBp":               "YXBp", // base64 of a short token is any short word's
		},
		"abc1234": {
			"Authorization: Bearer abc1234": "Authorization: Bearer ***",
			"xabc1234":                      "xabc1234",
			"abc1234%2Fx":                   "***%2Fx",
		},
	} {
		r := New(tok)
		for in, want := range cases {
			if got := r.Redact(in); got != want {
				t.Errorf("token %q: Redact(%q) = %q, want %q", tok, in, got, want)
			}
		}
	}
	r := New("api")
	base, _ := url.Parse("http://api.test:3017/api/v1")
	r.Keep(base)
	u, _ := url.Parse("http://api.test:3017/api/v1/browsers?page=6&key=api")
	if got, want := r.RedactURL(u), "http://api.test:3017/api/v1/browsers?page=6&key=***"; got != want {
		t.Errorf("RedactURL = %q, want %q", got, want)
	}
	if got, want := r.Redact(`dial tcp: lookup api.test: no such host; token api`), `dial tcp: lookup api.test: no such host; token ***`; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	// A token that holds the host is still masked: only a match wholly
	// inside the base address is the user's.
	r = New("api.test-4f7c9a2e")
	r.Keep(base)
	if got, want := r.Redact(`{"echo": "Bearer api.test-4f7c9a2e"}`), `{"echo": "Bearer ***"}`; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

func TestQuote_capsAndRedacts(t *testing.T) {
	t.Parallel()
	r := New("tok-abcdef123456")
	got := r.Quote("Bearer tok-abcdef123456\r\n" + strings.Repeat("y", 900_000))
	if len([]rune(got)) > MaxQuoted+1 || strings.Contains(got, "abcdef") || strings.ContainsAny(got, "\r\n") {
		t.Errorf("Quote = %.200q (%d runes)", got, len([]rune(got)))
	}
}

// FuzzRedact plants the token, in any of the echoed forms, anywhere in any
// text, and checks that no part of 8 or more characters survives.
func FuzzRedact(f *testing.F) {
	f.Add("prefix ", " suffix", uint8(0), uint8(0))
	f.Add(`{"a":"`, `"}`, uint8(3), uint8(1))
	f.Add("%", "\\", uint8(7), uint8(2))
	f.Add("&#", ";", uint8(13), uint8(3))
	f.Fuzz(func(t *testing.T, before, after string, form, which uint8) {
		tok := awkwardTokens[int(which)%len(awkwardTokens)]
		forms := echoes(tok)
		names := make([]string, 0, len(forms))
		for name := range forms {
			if !strings.HasPrefix(name, "cut") {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		text := before + forms[names[int(form)%len(names)]] + after
		got := New(tok).Redact(text)
		if part := survivingPart(got, tok); part != "" && !strings.Contains(before+after, part) {
			t.Fatalf("%q survives in %q", part, got)
		}
	})
}

// Every secret given is masked in every form, the short ones only where
// they stand alone.
func TestRedact_masksEverySecretGiven(t *testing.T) {
	r := New("tok-abcdef123456", "", "proxy-s3cret9", "gw")
	got := r.Redact(`Bearer tok-abcdef123456; http://u:proxy-s3cret9@proxy:3128; X-Gw: gw; gwen`)
	if want := `Bearer ***; http://u:***@proxy:3128; X-Gw: ***; gwen`; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}
