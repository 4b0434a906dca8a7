// Package records is the profile record: its type, where its key is (at
// the record's top, or in a JSON:API resource object's attributes), a
// single read's body decoded to one record, the members a dotted path names,
// the filters and fields that select from a list (select.go), and the
// did-you-mean search over a list (search.go). The interface document shows
// no response bodies, so decoding is tolerant: a record may come bare or in
// an envelope one or two levels down.
//
// Records are read through internal/jsonscan, as slices of the body they
// came in. The pager (internal/listing) finds them in a list's pages; the
// client and the provider read them here.
package records

import (
	"encoding/json"
	"fmt"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/jsonscan"
)

// Profile is one profile record.
type Profile struct {
	Key string          // profile_key, exactly as the service sent it
	Raw json.RawMessage // the whole record, byte for byte as the service sent it
}

// KeyField is the member that holds a record's key.
const KeyField = "profile_key"

// EnvelopeFields are the members that conventionally hold a list or a
// record in an envelope; a search looks at them first.
var EnvelopeFields = []string{"data", "profiles", "browsers", "items", "results", "records", "content", "list"}

// ShapeError says what a body that decodes as no list or profile lacks.
type ShapeError string

func (s ShapeError) Error() string { return string(s) }

// Key extracts profile_key from one object, where Locate finds it. A string
// is taken as its value; a number as its literal text, since identifiers are
// stored exactly as returned.
func Key(obj json.RawMessage) (key string, has bool, err error) {
	if jsonscan.FirstByte(obj) != '{' {
		return "", false, nil
	}
	raw, _, found := Locate(obj, KeyField)
	switch jsonscan.FirstByte(raw) {
	case 0:
		if !found {
			return "", false, nil
		}
	case '"':
		key = jsonscan.UnquoteShared(raw)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		key = string(raw)
	default:
		return "", false, fmt.Errorf("%s is %s, not a string", KeyField, raw)
	}
	if key == "" {
		return "", false, fmt.Errorf("%s is empty", KeyField)
	}
	return key, true, nil
}

// FromObject is the record raw is, when it carries a key.
func FromObject(raw json.RawMessage) (Profile, bool, error) {
	key, has, err := Key(raw)
	if err != nil || !has {
		return Profile{}, false, err
	}
	return Profile{Key: key, Raw: raw}, true, nil
}

// Decode finds the one profile in a GET /browsers/{key} body: the object
// itself, or an envelope holding it one or two levels down.
func Decode(body []byte) (Profile, error) {
	if err := jsonscan.Valid(body); err != nil {
		return Profile{}, ShapeError(err.Error())
	}
	if jsonscan.FirstByte(body) != '{' {
		return Profile{}, ShapeError("the body is not a JSON object")
	}
	if p, ok, err := FromObject(body); ok || err != nil {
		return p, err
	}
	// Breadth first: an envelope one level down wins over one two levels down.
	level := []json.RawMessage{body}
	for depth := 1; depth <= 2; depth++ {
		var next []json.RawMessage
		for _, raw := range level {
			obj := jsonscan.Object(raw)
			for _, name := range jsonscan.Keys(obj, EnvelopeFields) {
				if jsonscan.FirstByte(obj[name]) != '{' {
					continue
				}
				if p, ok, err := FromObject(obj[name]); ok || err != nil {
					return p, err
				}
				next = append(next, obj[name])
			}
		}
		level = next
	}
	return Profile{}, ShapeError("no object carrying " + KeyField + " was found at the top level or one or two levels down")
}

// errorFields are the members in which services wrap an error object.
var errorFields = []string{"error", "errors", "fault"}

// IsErrorObject reports whether a 2xx body is an error object rather than a
// profile: an object without profile_key at its top level that has a
// non-empty error, errors or fault member.
func IsErrorObject(body []byte) bool {
	if jsonscan.FirstByte(body) != '{' {
		return false
	}
	if _, ok := jsonscan.Field(body, KeyField); ok {
		return false
	}
	for _, name := range errorFields {
		if v, ok := jsonscan.Field(body, name); ok {
			s, isString := jsonscan.ScalarString(v)
			if isString && s != "" || !isString && s != "null" && s != "false" && s != "[]" && s != "{}" {
				return true
			}
		}
	}
	return false
}
