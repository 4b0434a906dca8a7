package records

import (
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/jsonscan"
)

// Match is a listed profile one of whose string fields holds a value given
// in place of a profile_key.
type Match struct {
	Key   string // the profile's real profile_key
	Field string // the JSON path of the field, such as "name" or "labels.display"
}

// FindByValue looks for given among the string fields of profiles, nested
// ones included. A display name is not an identifier (interface document,
// Resources rule 1), but a user who typed one should learn the key. Exact
// matches come first; then matches that ignore case and surrounding space.
func FindByValue(profiles []Profile, given string) []Match {
	var exact, loose []Match
	fold := strings.ToLower(strings.TrimSpace(given))
	for _, p := range profiles {
		eachString(p.Raw, "", func(path, v string) {
			switch {
			case path == KeyField:
				if v != given && strings.ToLower(strings.TrimSpace(v)) == fold {
					loose = append(loose, Match{Key: p.Key, Field: path})
				}
			case v == given:
				exact = append(exact, Match{Key: p.Key, Field: path})
			case strings.ToLower(strings.TrimSpace(v)) == fold:
				loose = append(loose, Match{Key: p.Key, Field: path})
			}
		})
	}
	var out []Match
	seen := map[string]bool{}
	for _, m := range append(exact, loose...) {
		if !seen[m.Key] {
			seen[m.Key] = true
			out = append(out, m)
		}
	}
	return out
}

// eachString calls fn with every string in the JSON value raw and its path
// ("labels.display", "tags[0]"), members in byte order; as with
// encoding/json, the last of duplicate names wins.
func eachString(raw []byte, path string, fn func(path, value string)) {
	switch jsonscan.FirstByte(raw) {
	case '"':
		fn(path, jsonscan.Unquote(raw))
	case '{':
		obj := jsonscan.Object(raw)
		for _, k := range jsonscan.Keys(obj, nil) {
			eachString(obj[k], joinPath(path, k), fn)
		}
	case '[':
		i := 0
		jsonscan.EachElement(raw, func(elem []byte) bool {
			eachString(elem, fmt.Sprintf("%s[%d]", path, i), fn)
			i++
			return true
		})
	}
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// ServiceSpelling returns the listed key whose NFC spelling is key, when
// the service spells it otherwise: Terraform hands the provider NFC strings,
// and the service knows its keys only as it spells them. "" when none.
func ServiceSpelling(profiles []Profile, key string) string {
	for _, p := range profiles {
		if p.Key != key && norm.NFC.String(p.Key) == key {
			return p.Key
		}
	}
	return ""
}
