package listing

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// A list of 100,000 profiles is tens of megabytes of JSON, and the
// provider's budget for reading it is what a GET and a generic decode of the
// same body cost (make bench). So bodies are checked once with json.Valid, and then walked by the
// small scanner below, which returns sub-slices of the body (no copies) and
// reads only the profile_key of each record. Every function here assumes
// valid JSON and never reads past the end of its input.

// eachElement calls fn with each value of the JSON array raw, until fn
// returns false, and returns how many it called fn with.
func eachElement(raw []byte, fn func(elem []byte) bool) int {
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

// eachField calls fn with each member of the JSON object raw, its name as
// the string literal it is in raw, until fn returns false.
func eachField(raw []byte, fn func(nameLit, value []byte) bool) {
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

// field returns the value of the member called name of the JSON object raw;
// as with encoding/json, the last of duplicate names wins.
func field(raw []byte, name string) (value []byte, ok bool) {
	eachField(raw, func(lit, v []byte) bool {
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
	return unquote(lit) == s
}

// unquote decodes a JSON string literal; the common case, one without
// escapes, is a plain conversion.
func unquote(lit []byte) string {
	if len(lit) >= 2 && bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	var s string
	_ = json.Unmarshal(lit, &s) // lit is a valid literal
	return s
}

// unquoteShared is unquote without a copy when lit has no escapes: the
// string shares lit's bytes. lit must be part of a body that is never
// written again, as a profile's key and record both point into the same
// body and live as long as each other; with 100,000 profiles, copies of the
// keys would add a tenth to the body.
func unquoteShared(lit []byte) string {
	if len(lit) > 2 && bytes.IndexByte(lit, '\\') < 0 {
		return unsafe.String(&lit[1], len(lit)-2)
	}
	return unquote(lit)
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
