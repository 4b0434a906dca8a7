package listing

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/jsonscan"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
)

// The interface document shows no response bodies, so decoding is tolerant:
// comparable services answer with a bare array, or an envelope that holds the
// array one or two levels down. The array is the one whose objects carry
// profile_key (records.Key). An empty array under one of the conventional
// envelope fields (records.EnvelopeFields) is an empty list.

type listPage struct {
	profiles []records.Profile
	hints    hints // what the envelope says of further pages
}

// decodeListPage finds the profiles in one page of GET /browsers. The
// profiles' Raw fields are slices of body.
func decodeListPage(body []byte) (listPage, error) {
	if err := jsonscan.Valid(body); err != nil {
		return listPage{}, records.ShapeError(err.Error())
	}
	switch jsonscan.FirstByte(body) {
	case '[':
		profiles, ok, err := decodeArray(body)
		if err == nil && !ok {
			err = records.ShapeError("the array's objects carry no " + records.KeyField)
		}
		return listPage{profiles: profiles}, err
	case '{':
	default:
		return listPage{}, records.ShapeError("the body is neither a JSON array nor an object")
	}
	top := jsonscan.Object(body)
	var page listPage
	page.hints.readBodyHints(body, 0)
	profiles, found, err := findArray(top)
	if err != nil || found {
		page.profiles = profiles
		return page, err
	}
	for _, name := range jsonscan.Keys(top, records.EnvelopeFields) {
		if jsonscan.FirstByte(top[name]) != '{' {
			continue
		}
		inner := jsonscan.Object(top[name])
		profiles, found, err := findArray(inner)
		if err != nil || found {
			page.profiles = profiles
			return page, err
		}
	}
	return listPage{}, records.ShapeError("no array of objects carrying " + records.KeyField + " was found at the top level or one or two levels down")
}

// findArray looks through one object's fields for the profile array. An
// empty array under a conventional list field counts as an empty list.
func findArray(obj map[string]json.RawMessage) (profiles []records.Profile, found bool, err error) {
	emptyList := false
	for _, name := range jsonscan.Keys(obj, records.EnvelopeFields) {
		if jsonscan.FirstByte(obj[name]) != '[' {
			continue
		}
		profiles, ok, err := decodeArray(obj[name])
		if err != nil {
			return nil, false, fmt.Errorf("in field %q: %w", name, err)
		}
		if ok && len(profiles) > 0 {
			return profiles, true, nil
		}
		if ok && slices.Contains(records.EnvelopeFields, name) {
			emptyList = true
		}
	}
	return nil, emptyList, nil
}

// decodeArray decodes an array of profile objects. ok is false when the
// array is not one of profiles (its first element has no profile_key); an
// empty array is ok.
func decodeArray(raw []byte) (profiles []records.Profile, ok bool, err error) {
	// Counted first, so that the profiles are allocated once, at their size.
	profiles = make([]records.Profile, 0, jsonscan.EachElement(raw, func([]byte) bool { return true }))
	ok = true
	jsonscan.EachElement(raw, func(elem []byte) bool {
		i := len(profiles)
		key, has, kerr := records.Key(elem)
		switch {
		case kerr != nil:
			err = records.ShapeError(fmt.Sprintf("element %d: %v", i, kerr))
		case !has && i == 0:
			ok = false
		case !has:
			err = records.ShapeError(fmt.Sprintf("element %d has no %s although the ones before it do", i, records.KeyField))
		default:
			profiles = append(profiles, records.Profile{Key: key, Raw: elem})
			return true
		}
		return false
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return profiles, true, nil
}
