package listing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Profile is one profile record.
type Profile struct {
	Key string          // profile_key, exactly as the service sent it
	Raw json.RawMessage // the whole record, byte for byte as the service sent it
}

// The interface document shows no response bodies, so decoding is tolerant:
// comparable services answer with a bare array, or an envelope that holds the
// array one or two levels down. The array is the one whose objects carry
// profile_key. All decoding of bodies lives in this file.

const keyField = "profile_key"

// listKeys are the envelope fields that conventionally hold a list; they are
// looked at first, and an empty array under one of them is an empty list.
var listKeys = []string{"data", "profiles", "browsers", "items", "results", "records", "content", "list"}

type listPage struct {
	profiles []Profile
	hints    hints // what the envelope says of further pages
}

// decodeListPage finds the profiles in one page of GET /browsers. The
// profiles' Raw fields are slices of body.
func decodeListPage(body []byte) (listPage, error) {
	if err := validJSON(body); err != nil {
		return listPage{}, err
	}
	switch firstByte(body) {
	case '[':
		profiles, ok, err := decodeArray(body)
		if err == nil && !ok {
			err = shapeDetail("the array's objects carry no " + keyField)
		}
		return listPage{profiles: profiles}, err
	case '{':
	default:
		return listPage{}, shapeDetail("the body is neither a JSON array nor an object")
	}
	top := decodeObject(body)
	var page listPage
	page.hints.readBodyHints(body, 0)
	profiles, found, err := findArray(top)
	if err != nil || found {
		page.profiles = profiles
		return page, err
	}
	for _, name := range orderedKeys(top) {
		if firstByte(top[name]) != '{' {
			continue
		}
		inner := decodeObject(top[name])
		profiles, found, err := findArray(inner)
		if err != nil || found {
			page.profiles = profiles
			return page, err
		}
	}
	return listPage{}, shapeDetail("no array of objects carrying " + keyField + " was found at the top level or one or two levels down")
}

// findArray looks through one object's fields for the profile array. An
// empty array under a conventional list field counts as an empty list.
func findArray(obj map[string]json.RawMessage) (profiles []Profile, found bool, err error) {
	emptyList := false
	for _, name := range orderedKeys(obj) {
		if firstByte(obj[name]) != '[' {
			continue
		}
		profiles, ok, err := decodeArray(obj[name])
		if err != nil {
			return nil, false, fmt.Errorf("in field %q: %w", name, err)
		}
		if ok && len(profiles) > 0 {
			return profiles, true, nil
		}
		if ok && slices.Contains(listKeys, name) {
			emptyList = true
		}
	}
	return nil, emptyList, nil
}

// decodeArray decodes an array of profile objects. ok is false when the
// array is not one of profiles (its first element has no profile_key); an
// empty array is ok.
func decodeArray(raw []byte) (profiles []Profile, ok bool, err error) {
	// Counted first, so that the profiles are allocated once, at their size.
	profiles = make([]Profile, 0, eachElement(raw, func([]byte) bool { return true }))
	ok = true
	eachElement(raw, func(elem []byte) bool {
		i := len(profiles)
		key, has, kerr := profileKey(elem)
		switch {
		case kerr != nil:
			err = shapeDetail(fmt.Sprintf("element %d: %v", i, kerr))
		case !has && i == 0:
			ok = false
		case !has:
			err = shapeDetail(fmt.Sprintf("element %d has no %s although the ones before it do", i, keyField))
		default:
			profiles = append(profiles, Profile{Key: key, Raw: elem})
			return true
		}
		return false
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return profiles, true, nil
}

// errorFields are the members in which services wrap an error object.
var errorFields = []string{"error", "errors", "fault"}

// IsErrorObject reports whether a 2xx body is an error object rather than a
// profile: an object without profile_key at its top level that has a
// non-empty error, errors or fault member.
func IsErrorObject(body []byte) bool {
	if firstByte(body) != '{' {
		return false
	}
	if _, ok := field(body, keyField); ok {
		return false
	}
	for _, name := range errorFields {
		if v, ok := field(body, name); ok {
			s, isString := scalarString(v)
			if isString && s != "" || !isString && s != "null" && s != "false" && s != "[]" && s != "{}" {
				return true
			}
		}
	}
	return false
}

// DecodeProfile finds the one profile in a GET /browsers/{key} body: the
// object itself, or an envelope holding it one or two levels down.
func DecodeProfile(body []byte) (Profile, error) {
	if err := validJSON(body); err != nil {
		return Profile{}, err
	}
	if firstByte(body) != '{' {
		return Profile{}, shapeDetail("the body is not a JSON object")
	}
	if p, ok, err := asProfile(body); ok || err != nil {
		return p, err
	}
	// Breadth first: an envelope one level down wins over one two levels down.
	level := []json.RawMessage{body}
	for depth := 1; depth <= 2; depth++ {
		var next []json.RawMessage
		for _, raw := range level {
			obj := decodeObject(raw)
			for _, name := range orderedKeys(obj) {
				if firstByte(obj[name]) != '{' {
					continue
				}
				if p, ok, err := asProfile(obj[name]); ok || err != nil {
					return p, err
				}
				next = append(next, obj[name])
			}
		}
		level = next
	}
	return Profile{}, shapeDetail("no object carrying " + keyField + " was found at the top level or one or two levels down")
}

func asProfile(raw json.RawMessage) (Profile, bool, error) {
	key, has, err := profileKey(raw)
	if err != nil || !has {
		return Profile{}, false, err
	}
	return Profile{Key: key, Raw: raw}, true, nil
}

// profileKey extracts profile_key from one object: at its top, or, for a
// JSON:API resource object ({"type", "id", "attributes": {…}}), inside its
// attributes, so that the list and the single read both take the whole
// resource object as the record. A string is taken as its value; a number
// as its literal text, since identifiers are stored exactly as returned.
func profileKey(obj json.RawMessage) (key string, has bool, err error) {
	if firstByte(obj) != '{' {
		return "", false, nil
	}
	raw, found := field(obj, keyField)
	if !found {
		if attrs, ok := field(obj, "attributes"); ok && firstByte(attrs) == '{' {
			raw, found = field(attrs, keyField)
		}
	}
	switch firstByte(raw) {
	case 0:
		if !found {
			return "", false, nil
		}
	case '"':
		key = unquoteShared(raw)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		key = string(raw)
	default:
		return "", false, fmt.Errorf("%s is %s, not a string", keyField, raw)
	}
	if key == "" {
		return "", false, fmt.Errorf("%s is empty", keyField)
	}
	return key, true, nil
}

// decodeObject returns the members of a JSON object, as slices of raw.
func decodeObject(raw []byte) map[string]json.RawMessage {
	obj := map[string]json.RawMessage{}
	eachField(raw, func(name, value []byte) bool {
		obj[unquote(name)] = value
		return true
	})
	return obj
}

// validJSON checks a whole body once, so that the scanner can assume it is
// well formed; only on failure is it decoded again, for a precise message.
func validJSON(body []byte) error {
	if json.Valid(body) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return syntaxError(err)
	}
	return shapeDetail("invalid JSON")
}

// orderedKeys returns obj's field names, conventional list fields first, the
// rest in byte order, so that decoding does not depend on map order.
func orderedKeys(obj map[string]json.RawMessage) []string {
	names := make([]string, 0, len(obj))
	for _, k := range listKeys {
		if _, ok := obj[k]; ok {
			names = append(names, k)
		}
	}
	rest := make([]string, 0, len(obj))
	for k := range obj {
		if !slices.Contains(listKeys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

func firstByte(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// shapeDetail is what a body that decodes as no list or profile lacks.
type shapeDetail string

func (s shapeDetail) Error() string { return string(s) }

func syntaxError(err error) error { return shapeDetail("invalid JSON: " + err.Error()) }
