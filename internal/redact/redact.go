// Package redact masks secrets (the API token, a proxy's password, a
// gateway header's value) in text that comes from outside the provider, in
// every form a service (or a proxy in front of it) may echo one back:
// literal, URL-escaped, JSON-escaped, HTML-escaped, base64 (of the token or
// of "Bearer <token>"), or a mix, in a body, a header, a status line or a
// next-page link.
//
// The model: Redactor.Redact decodes the text into views (one per kind of
// escaping, and all kinds at once, twice over for double escaping), finds
// the secret's forms in each view, and masks the original bytes behind each
// match. A trailing fragment of the secret, left where a text was cut, is
// masked too.
//
// Only text from outside is redacted, where it enters a message or a log
// line; the provider's own words and the user's settings (the base address
// above all, see Keep) never are. A secret shorter than ShortSecret
// characters (a test token, "t" or "abc") would be found inside ordinary
// words, so in outside text it is masked only where it stands alone, not
// inside a longer run of letters and digits: "Bearer abc" and "token=abc"
// are masked, "abcde" is not.
//
// It uses the standard library only.
package redact

import (
	"bytes"
	"encoding/base64"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mask is what stands in for the token.
const Mask = "***"

// minFragment is the shortest fragment of the token, cut off at either end
// of a text, that is masked.
const minFragment = 6

// ShortSecret is the length under which a secret is masked only where it
// stands alone.
const ShortSecret = 8

// Window is how much of an outside text is redacted to quote its start
// (Clip): enough for the quote however much white space is folded, and for
// the secret in its longest encodings.
const Window = 16 << 10

// Redactor masks its secrets. The zero value masks nothing.
type Redactor struct {
	forms []form // the secrets' forms, searched in each decoded view
	// own are the base address the user configured and its host, longest
	// first: shown as they are wherever they appear.
	own []string
}

// Keep makes r show the base address the user configured as it is.
func (r *Redactor) Keep(base *url.URL) {
	r.own = []string{base.String(), base.Host, base.Hostname()}
}

// inOwn tells whether b[start:end] lies wholly inside an occurrence of the
// user's base address or host.
func (r *Redactor) inOwn(b []byte, start, end int) bool {
	for _, own := range r.own {
		for from := max(0, end-len(own)); from <= start; {
			i := bytes.Index(b[from:min(len(b), start+len(own))], []byte(own))
			if i < 0 {
				break
			}
			if from+i <= start && end <= from+i+len(own) {
				return true
			}
			from += i + 1
		}
	}
	return false
}

// form is one form of a secret; a short secret's is masked only where it
// stands alone.
type form struct {
	b     []byte
	short bool
}

// New returns a Redactor for the secrets: the token, and any other value
// that must never be shown (a proxy's password, a gateway header's value).
// Empty ones are skipped.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, secret := range secrets {
		if secret != "" {
			r.forms = append(r.forms, forms(secret)...)
		}
	}
	return r
}

// forms are the forms of one secret that Redact searches for.
func forms(secret string) []form {
	if len(secret) < ShortSecret {
		return []form{{b: []byte(secret), short: true}}
	}
	out := []form{{b: []byte(secret)}}
	// An escape-like text just before or after the secret ("\t" before
	// "tok…") can swallow its first or last character in a decoded view;
	// the secret less that character is still found.
	if len(secret) >= 10 {
		out = append(out, form{b: []byte(secret[1:])}, form{b: []byte(secret[:len(secret)-1])}, form{b: []byte(secret[1 : len(secret)-1])})
	}
	// base64 of any text holding the secret holds one of these, whatever the
	// secret's alignment in that text: the characters whose 6 bits all come
	// from the secret.
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			full := enc.EncodeToString(append(bytes.Repeat([]byte{0}, k), secret...))
			bits := 8 * (k + len(secret))
			from, to := (8*k+5)/6, bits/6
			if to-from >= 8 {
				out = append(out, form{b: []byte(full[from:to])})
			}
		}
	}
	return out
}

// escapeChars are the characters every decoder starts from: in a text
// without any of them, each decoded view is the literal text.
const escapeChars = "%+\\&"

// Redact returns s with every form of the secret masked, except where a
// match lies wholly inside the base address the user configured, which
// outside text may quote (a transport error naming the host, a link back to
// the API).
func (r *Redactor) Redact(s string) string {
	if r == nil || len(r.forms) == 0 || s == "" {
		return s
	}
	b := []byte(s)
	chains := decoderChains
	if !strings.ContainsAny(s, escapeChars) {
		chains = chains[:1]
	}
	for _, chain := range chains {
		v := identityView(b)
		for _, dec := range chain {
			v = v.decode(dec)
		}
		b = r.maskIn(b, v)
	}
	return string(b)
}

// RedactURL shows an address as users and logs see it: with its query
// values (which page failed), without user information or a fragment, and
// with the secret masked in all but the base address the user configured.
func (r *Redactor) RedactURL(u *url.URL) string {
	v := *u
	v.User = nil
	v.Fragment, v.RawFragment = "", ""
	return r.Redact(v.String())
}

// MaxQuoted is how much of a header value a diagnostic quotes.
const MaxQuoted = 120

// Quote makes an outside value fit to quote on one line: redacted, control
// characters replaced, cut to MaxQuoted characters.
func (r *Redactor) Quote(s string) string {
	return r.Clip(s, MaxQuoted, func(s string) string {
		return strings.Map(func(c rune) rune {
			if c < ' ' || c == 0x7f {
				return ' '
			}
			return c
		}, s)
	})
}

// Clip quotes the start of an outside text: a window far longer than what
// is kept is redacted, tidied and cut to limit characters. The secret is
// masked before the cut, so no part of it survives a cut either, and a huge
// text (a 900 KB header) costs no more than its window.
func (r *Redactor) Clip(s string, limit int, tidy func(string) string) string {
	return Cut(tidy(r.Redact(strings.ToValidUTF8(s[:min(len(s), Window)], "\uFFFD"))), limit)
}

// Cut shortens s to limit characters, an ellipsis standing for the rest.
// A secret cut in two is still masked where the cut text is redacted (its
// fragment at the end), but redacting first is the sure way: Clip.
func Cut(s string, limit int) string {
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit]) + "…"
	}
	return s
}

// maskIn masks, in b, the original bytes behind every match of a form in
// the view v of b, and behind a fragment of a form at either end of v.
func (r *Redactor) maskIn(b []byte, v view) []byte {
	var spans [][2]int
	for _, f := range r.forms {
		form := f.b
		for i := 0; ; {
			j := bytes.Index(v.b[i:], form)
			if j < 0 {
				break
			}
			if start, end := i+j, i+j+len(form); !f.short || standsAlone(v.b, start, end) {
				spans = append(spans, v.original(start, end))
			}
			i += j + 1
		}
		if f.short {
			continue // a short secret's fragment is any word's
		}
		// A text cut in the middle of the secret.
		for n := min(len(form)-1, len(v.b)); n >= minFragment; n-- {
			if bytes.HasSuffix(v.b, form[:n]) {
				spans = append(spans, v.original(len(v.b)-n, len(v.b)))
				break
			}
		}
		for n := min(len(form)-1, len(v.b)); n >= minFragment; n-- {
			if bytes.HasPrefix(v.b, form[len(form)-n:]) {
				spans = append(spans, v.original(0, n))
				break
			}
		}
	}
	spans = slices.DeleteFunc(spans, func(sp [2]int) bool { return r.inOwn(b, sp[0], sp[1]) })
	if len(spans) == 0 {
		return b
	}
	masked := make([]bool, len(b))
	for _, sp := range spans {
		for i := sp[0]; i < sp[1]; i++ {
			masked[i] = true
		}
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if !masked[i] {
			out = append(out, b[i])
			continue
		}
		out = append(out, Mask...)
		for i+1 < len(b) && masked[i+1] {
			i++
		}
	}
	return out
}

// standsAlone tells whether b[start:end] is not inside a longer run of
// letters and digits.
func standsAlone(b []byte, start, end int) bool {
	return (start == 0 || !isAlnum(b[start-1])) && (end == len(b) || !isAlnum(b[end]))
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// view is a decoded form of a text: each byte of b came from the original
// bytes [start[i], end[i]).
type view struct {
	b          []byte
	start, end []int
}

func identityView(b []byte) view {
	v := view{b: b, start: make([]int, len(b)), end: make([]int, len(b))}
	for i := range b {
		v.start[i], v.end[i] = i, i+1
	}
	return v
}

// original returns the original span behind v.b[i:j].
func (v view) original(i, j int) [2]int {
	return [2]int{v.start[i], v.end[j-1]}
}

// A decoder looks at position i of b and, if an escape starts there,
// returns what it stands for and its length.
type decoder func(b []byte, i int) (decoded []byte, n int)

// decode applies dec to v, keeping the mapping to the original text.
func (v view) decode(dec decoder) view {
	out := view{b: make([]byte, 0, len(v.b)), start: make([]int, 0, len(v.b)), end: make([]int, 0, len(v.b))}
	for i := 0; i < len(v.b); {
		d, n := dec(v.b, i)
		if n == 0 {
			d, n = v.b[i:i+1], 1
		}
		for _, c := range d {
			out.b = append(out.b, c)
			out.start = append(out.start, v.start[i])
			out.end = append(out.end, v.end[i+n-1])
		}
		i += n
	}
	return out
}

// decoderChains are the views searched, in order: each kind of escaping on
// its own (so that an escape-like prefix such as "%0" before the token cannot
// swallow its first character in another kind's view), then all kinds mixed,
// once and twice over (%252F, &amp;#43;, a JSON-escaped URL).
var decoderChains = [][]decoder{
	{}, // literal: first, and alone for a text without escapes

	{percentDecoder(false)},
	{percentDecoder(true)}, // form encoding: '+' is a space
	{jsonEscape},
	{htmlEscape},
	{percentDecoder(false), percentDecoder(false)},
	{htmlEscape, htmlEscape},
	{anyEscape},
	{anyEscape, anyEscape},
	{percentDecoder(true), anyEscape, anyEscape},
}

func percentDecoder(plusIsSpace bool) decoder {
	return func(b []byte, i int) ([]byte, int) {
		switch {
		case b[i] == '+' && plusIsSpace:
			return []byte{' '}, 1
		case b[i] == '%' && i+2 < len(b):
			if n, err := strconv.ParseUint(string(b[i+1:i+3]), 16, 8); err == nil {
				return []byte{byte(n)}, 3
			}
		}
		return nil, 0
	}
}

// anyEscape decodes one percent-, JSON- or HTML-escape.
func anyEscape(b []byte, i int) ([]byte, int) {
	switch b[i] {
	case '%':
		return percentDecoder(false)(b, i)
	case '\\':
		return jsonEscape(b, i)
	case '&':
		return htmlEscape(b, i)
	}
	return nil, 0
}

// htmlEscape decodes one character reference: &amp; &#43; &#x2B;.
func htmlEscape(b []byte, i int) ([]byte, int) {
	if b[i] != '&' {
		return nil, 0
	}
	end := bytes.IndexByte(b[i:min(len(b), i+12)], ';')
	if end > 1 {
		if s := html.UnescapeString(string(b[i : i+end+1])); s != string(b[i:i+end+1]) {
			return []byte(s), end + 1
		}
	}
	return nil, 0
}

// jsonEscape decodes one JSON escape: \" \/ \n \u002B, surrogate pairs too.
func jsonEscape(b []byte, i int) ([]byte, int) {
	if b[i] != '\\' || i+1 >= len(b) {
		return nil, 0
	}
	switch c := b[i+1]; c {
	case '"', '\\', '/':
		return []byte{c}, 2
	case 'n':
		return []byte{'\n'}, 2
	case 't':
		return []byte{'\t'}, 2
	case 'r':
		return []byte{'\r'}, 2
	case 'b':
		return []byte{'\b'}, 2
	case 'f':
		return []byte{'\f'}, 2
	case 'u':
		if i+6 > len(b) {
			return nil, 0
		}
		n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		if err != nil {
			return nil, 0
		}
		r, size := rune(n), 6
		if utf16IsHigh(r) && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
			if lo, err := strconv.ParseUint(string(b[i+8:i+12]), 16, 16); err == nil {
				r, size = 0x10000+(r-0xD800)<<10+(rune(lo)-0xDC00), 12
			}
		}
		return utf8.AppendRune(nil, r), size
	}
	return nil, 0
}

func utf16IsHigh(r rune) bool { return r >= 0xD800 && r < 0xDC00 }

// Origin names a foreign address by its scheme and host alone: its path and
// query might carry anything, the secret included.
func Origin(u *url.URL) string {
	return u.Scheme + "://" + u.Host + "/…"
}
