// Package jsonscan walks JSON bodies without decoding them. A list of
// 100,000 profiles is tens of megabytes of JSON, and the provider's budget
// for reading it is what a GET and a generic decode of the same body cost
// (make bench). So a body is checked once (Valid), and then walked by this
// small scanner, which returns sub-slices of the body (no copies) and reads
// only what it is asked for. Every function but Valid assumes valid JSON
// and never reads past the end of its input.
//
// It depends on nothing else in the project: the pager (internal/listing)
// and the records (internal/records) both read bodies through it.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unsafe"
)

// EachElement calls fn with each value of the JSON array raw, until fn
// returns false, and returns how many it called fn with.
func EachElement(raw []byte, fn func(elem []byte) bool) int {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return 0
	}
	n := 0
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; {
		end := skipValue(raw, i)
		n++
		if !fn(raw[i:end]) {
			return n
		}
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return n
}

// EachField calls fn with each member of the JSON object raw, its name as
// the string literal it is in raw, until fn returns false.
func EachField(raw []byte, fn func(nameLit, value []byte) bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; {
		nameEnd := skipString(raw, i)
		name := raw[i:nameEnd]
		i = skipSpace(raw, nameEnd)
		if i < len(raw) && raw[i] == ':' {
			i = skipSpace(raw, i+1)
		}
		end := skipValue(raw, i)
		if !fn(name, raw[i:end]) {
			return
		}
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
}

// Field returns the value of the member called name of the JSON object raw;
// as with encoding/json, the last of duplicate names wins.
func Field(raw []byte, name string) (value []byte, ok bool) {
	EachField(raw, func(lit, v []byte) bool {
		if literalIs(lit, name) {
			value, ok = v, true
		}
		return true
	})
	return value, ok
}

// literalIs reports whether the string literal lit decodes to s, without
// allocating in the common case of a literal without escapes.
func literalIs(lit []byte, s string) bool {
	if bytes.IndexByte(lit, '\\') < 0 {
		return len(lit) == len(s)+2 && string(lit[1:len(lit)-1]) == s
	}
	return Unquote(lit) == s
}

// Unquote decodes a JSON string literal; the common case, one without
// escapes, is a plain conversion.
func Unquote(lit []byte) string {
	if len(lit) >= 2 && bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	var s string
	_ = json.Unmarshal(lit, &s) // lit is a valid literal
	return s
}

// UnquoteShared is Unquote without a copy when lit has no escapes: the
// string shares lit's bytes. lit must be part of a body that is never
// written again, as a profile's key and record both point into the same
// body and live as long as each other; with 100,000 profiles, copies of the
// keys would add a tenth to the body.
func UnquoteShared(lit []byte) string {
	if len(lit) > 2 && bytes.IndexByte(lit, '\\') < 0 {
		return unsafe.String(&lit[1], len(lit)-2)
	}
	return Unquote(lit)
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string literal starting at i.
func skipString(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(raw)
}

// skipValue returns the index just past the value starting at i.
func skipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return len(raw)
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for ; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				i = skipString(raw, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(raw)
	default: // number, true, false, null
		for ; i < len(raw); i++ {
			switch raw[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return len(raw)
	}
}

// FirstByte is the first byte of raw that is not white space; 0 when none.
func FirstByte(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// Walk follows the dot-separated path through objects: the one way a path
// is walked, in a record or in a page's body.
func Walk(obj []byte, path string) ([]byte, bool) {
	for name := range strings.SplitSeq(path, ".") {
		if FirstByte(obj) != '{' {
			return nil, false
		}
		v, ok := Field(obj, name)
		if !ok {
			return nil, false
		}
		obj = v
	}
	return obj, true
}

// ScalarString is a value as text: a string's contents (isString), or any
// other value's literal text.
func ScalarString(value []byte) (s string, isString bool) {
	if FirstByte(value) == '"' {
		return Unquote(value), true
	}
	return strings.TrimSpace(string(value)), false
}

// Object returns the members of a JSON object, as slices of raw.
func Object(raw []byte) map[string]json.RawMessage {
	obj := map[string]json.RawMessage{}
	EachField(raw, func(name, value []byte) bool {
		obj[Unquote(name)] = value
		return true
	})
	return obj
}

// Keys returns obj's member names, those named in first first (in that
// order), the rest in byte order, so that a search does not depend on map
// order.
func Keys(obj map[string]json.RawMessage, first []string) []string {
	names := make([]string, 0, len(obj))
	for _, k := range first {
		if _, ok := obj[k]; ok {
			names = append(names, k)
		}
	}
	rest := make([]string, 0, len(obj))
	for k := range obj {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// Valid checks a whole body once, so that the scanner can assume it is well
// formed; only on failure is it decoded again, for a precise message.
func Valid(body []byte) error {
	if json.Valid(body) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return errors.New("invalid JSON: " + err.Error())
	}
	return errors.New("invalid JSON")
}
