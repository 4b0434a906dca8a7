package records

import "github.com/browserprofile/terraform-provider-browserprofile/internal/jsonscan"

// Member returns the value at the dotted path in the record raw: from its
// top, or from its JSON:API attributes.
func Member(raw []byte, path string) ([]byte, bool) {
	v, _, ok := Locate(raw, path)
	return v, ok
}

// Locate is Member, with the path from the record's top where the value
// was found: path, or "attributes." and path. It is the one place a record's
// members are looked for, its key's included.
func Locate(raw []byte, path string) (v []byte, full string, ok bool) {
	if v, ok := jsonscan.Walk(raw, path); ok {
		return v, path, true
	}
	if v, ok := jsonscan.Walk(attributesOf(raw), path); ok {
		return v, "attributes." + path, true
	}
	return nil, "", false
}

// attributesOf is a JSON:API resource object's attributes, or nil.
func attributesOf(raw []byte) []byte {
	if attrs, ok := jsonscan.Field(raw, "attributes"); ok && jsonscan.FirstByte(attrs) == '{' {
		return attrs
	}
	return nil
}
