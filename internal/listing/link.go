package listing

import (
	"net/http"
	"slices"
	"strings"
)

// linkNext returns the target of the first link with relation type "next"
// in the response's Link headers (RFC 8288, section 3), or "".
//
// A target sits between < and >, and may itself hold ',' and ';' (a query
// such as ?sort=name,asc, or a ;jsessionid= path parameter), so the header is
// read character by character rather than split: links are separated by ','
// only outside <…> and outside quoted parameter values.
func linkNext(h http.Header) string {
	for _, v := range h.Values("Link") {
		for _, l := range parseLinks(v) {
			// An empty target is the page itself, never the next one.
			if slices.Contains(l.rels, "next") && l.target != "" {
				return l.target
			}
		}
	}
	return ""
}

type link struct {
	target string
	rels   []string // relation types, lower case
}

// parseLinks parses one Link header value. Malformed parts are skipped: what
// cannot be parsed is never guessed at.
func parseLinks(v string) []link {
	var out []link
	for i := 0; i < len(v); {
		i = skipLinkSpace(v, i)
		if i >= len(v) {
			break
		}
		if v[i] != '<' {
			i = nextLinkStart(v, i)
			continue
		}
		end := strings.IndexByte(v[i:], '>')
		if end < 0 {
			break
		}
		l := link{target: strings.TrimSpace(v[i+1 : i+end])}
		i += end + 1
		// Parameters: ; name[=value], value a token or a quoted string.
		for {
			i = skipLinkSpace(v, i)
			if i >= len(v) || v[i] != ';' {
				break
			}
			i = skipLinkSpace(v, i+1)
			start := i
			for i < len(v) && !strings.ContainsRune("=;,", rune(v[i])) {
				i++
			}
			name := strings.ToLower(strings.TrimSpace(v[start:i]))
			var value string
			if i < len(v) && v[i] == '=' {
				value, i = linkParamValue(v, skipLinkSpace(v, i+1))
			}
			if name == "rel" && l.rels == nil { // only the first rel counts (RFC 8288, 3.3)
				l.rels = strings.Fields(strings.ToLower(value))
			}
		}
		out = append(out, l)
		i = nextLinkStart(v, i)
	}
	return out
}

// linkParamValue reads a token or a quoted string starting at i.
func linkParamValue(v string, i int) (string, int) {
	if i < len(v) && v[i] == '"' {
		var b strings.Builder
		for i++; i < len(v); i++ {
			switch v[i] {
			case '\\':
				if i+1 < len(v) {
					i++
					b.WriteByte(v[i])
				}
			case '"':
				return b.String(), i + 1
			default:
				b.WriteByte(v[i])
			}
		}
		return b.String(), i
	}
	start := i
	for i < len(v) && v[i] != ';' && v[i] != ',' {
		i++
	}
	return strings.TrimSpace(v[start:i]), i
}

// nextLinkStart skips to just past the next ',' that separates links.
func nextLinkStart(v string, i int) int {
	for i < len(v) && v[i] != ',' {
		if v[i] == '"' {
			_, i = linkParamValue(v, i)
			continue
		}
		i++
	}
	return i + 1
}

func skipLinkSpace(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}
