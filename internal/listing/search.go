package listing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
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
		dec := json.NewDecoder(bytes.NewReader(p.Raw))
		dec.UseNumber()
		var rec any
		if dec.Decode(&rec) != nil {
			continue
		}
		walkStrings(rec, "", func(path, v string) {
			switch {
			case path == keyField:
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

func walkStrings(v any, path string, fn func(path, value string)) {
	switch v := v.(type) {
	case string:
		fn(path, v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkStrings(v[k], joinPath(path, k), fn)
		}
	case []any:
		for i, e := range v {
			walkStrings(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
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
