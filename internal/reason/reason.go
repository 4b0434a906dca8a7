// Package reason reads a service's reason for a refusal out of its body.
// A 4xx or 5xx body often says why, in one of a few conventional shapes:
// RFC 9457 problem details (title, detail, errors, invalid-params, and the
// validation list some servers add), JSON:API's errors[].detail, and the
// common {"error": …, "message": …} and {"errors": […]}. Of reads the
// words out of such a body, so that a user sees the service's reason
// whole, before any excerpt of the body. The caller masks secrets in it:
// it is outside text.
package reason

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// maxReason is how much of a reason a diagnostic shows.
const maxReason = 1000

// maxReasonBody is the largest body read for a reason: error bodies are
// small, and a large one is not an error object.
const maxReasonBody = 64 << 10

// Of returns the service's reason for a refusal in one line, or "".
func Of(body []byte) string {
	if len(body) > maxReasonBody || !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil {
		return ""
	}
	var parts []string
	add := func(s string) {
		if s = strings.Join(strings.Fields(s), " "); s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	for _, name := range []string{"title", "detail", "message", "error_description"} {
		add(text(obj[name]))
	}
	switch e := obj["error"].(type) {
	case string:
		add(e)
	case map[string]any:
		for _, name := range []string{"title", "message", "detail", "code"} {
			if s := text(e[name]); s != "" {
				add(s)
				break
			}
		}
	}
	for _, name := range []string{"errors", "invalid-params", "invalid_params", "validation"} {
		items, _ := obj[name].([]any)
		for _, item := range items {
			add(itemReason(item))
		}
	}
	return redact.Cut(strings.Join(parts, "; "), maxReason)
}

// itemReason reads one entry of an error list: a string, or an object with
// a message and where it applies.
func itemReason(item any) string {
	switch v := item.(type) {
	case string:
		return v
	case map[string]any:
		msg := ""
		for _, name := range []string{"detail", "message", "reason", "title", "msg"} {
			if msg = text(v[name]); msg != "" {
				break
			}
		}
		where := ""
		for _, name := range []string{"name", "field", "pointer", "location", "loc", "parameter", "path"} {
			if where = text(v[name]); where != "" {
				break
			}
		}
		if src, ok := v["source"].(map[string]any); ok && where == "" {
			where = text(src["pointer"]) + text(src["parameter"])
		}
		if where != "" && msg != "" {
			return where + ": " + msg
		}
		return msg
	}
	return ""
}

// text is a JSON value as words: a string, a number, or a list of them
// joined by dots (a location such as ["query", "limit"]).
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case []any:
		var parts []string
		for _, e := range v {
			if s := text(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ".")
	}
	return ""
}
