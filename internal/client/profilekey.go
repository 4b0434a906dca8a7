package client

import (
	"errors"
	"net/url"
	"regexp"
)

// placeholder matches literal template braces such as {profile_key} or
// {base_url}, which the interface document names as a known cause of failed
// requests: a path must carry a real value.
var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

// Placeholder returns the first placeholder in s, or "".
func Placeholder(s string) string {
	return placeholder.FindString(s)
}

// Reasons CheckProfileKey refuses a key.
var (
	ErrKeyEmpty       = errors.New("a profile_key cannot be empty")
	ErrKeyDotSegment  = errors.New(`"." and ".." are path segments, not profile_keys`)
	ErrKeyPlaceholder = errors.New("the value still holds placeholder braces")
)

// CheckProfileKey reports whether key can address one profile. Everything
// else is sent as given: identifiers are stored exactly as returned, so a key
// is never trimmed, case-folded or re-encoded here.
func CheckProfileKey(key string) error {
	switch {
	case key == "":
		return ErrKeyEmpty
	case key == "." || key == "..":
		// Would be resolved away as a path segment and address another resource.
		return ErrKeyDotSegment
	case Placeholder(key) != "":
		return ErrKeyPlaceholder
	}
	return nil
}

// profileURL returns base + /browsers/{key}, with key percent-encoded as one
// path segment, so that '/', '?', '#', '%', spaces and non-ASCII reach the
// service intact (interface document, Endpoints rules 1 and 2).
func profileURL(base *url.URL, key string) *url.URL {
	u := *base
	u.Path = base.Path + "/browsers/" + key
	u.RawPath = base.EscapedPath() + "/browsers/" + url.PathEscape(key)
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	return &u
}

// listURL returns base + /browsers.
func listURL(base *url.URL) *url.URL {
	return base.JoinPath("browsers")
}
