package records

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/jsonscan"
)

// A Selection keeps some profiles of a complete list, and some members of
// each record. It runs after the list is read and checked, never instead:
// an incomplete list fails before any filter runs.
//
// A member is named by a dotted path ("proxy.country"), read where the
// key is read: at the record's top, or, for a JSON:API resource object,
// in its attributes. A filter matches a record whose member is a string
// equal to one of its values, a number or boolean whose JSON text is one
// ("3", "true"), or an array holding such an element; an object, null, or
// a missing member matches nothing. A path that no record in the list
// carries is a mistake, not an empty result (MemberError): an empty list
// fed to for_each destroys every resource keyed by it on the next apply.

// Filter keeps the profiles whose member Field holds one of Values.
type Filter struct {
	Field  string
	Values []string
}

// Selection is the filters every kept profile matches, and the members its
// record is trimmed to (with the member holding its key); no Fields keeps
// every record whole.
type Selection struct {
	Filters []Filter
	Fields  []string
}

// MemberError is a filter's field or a fields entry that no profile in the
// list carries.
type MemberError struct {
	Argument   string   // "filter" or "fields"
	Index      int      // the block's or the entry's position
	Member     string   // the path as the user wrote it
	Profiles   int      // how many profiles the list holds
	Carried    []string // the members the records carry where the path failed, sorted
	Suggestion string   // one of them close to Member, or ""
}

func (e *MemberError) Error() string {
	return fmt.Sprintf("none of the %d profiles carries the member %q", e.Profiles, e.Member)
}

// Apply returns the profiles the selection keeps, in their order, their
// records trimmed to Fields. A path no profile carries fails with a
// *MemberError; an empty list has nothing to check and stays empty.
func (s Selection) Apply(profiles []Profile) ([]Profile, error) {
	if len(profiles) == 0 || len(s.Filters) == 0 && len(s.Fields) == 0 {
		return profiles, nil
	}
	for i, f := range s.Filters {
		if err := carried(profiles, "filter", i, f.Field); err != nil {
			return nil, err
		}
	}
	for i, f := range s.Fields {
		if err := carried(profiles, "fields", i, f); err != nil {
			return nil, err
		}
	}
	kept := make([]Profile, 0, len(profiles))
	for _, p := range profiles {
		if !s.matches(p.Raw) {
			continue
		}
		if len(s.Fields) > 0 {
			p.Raw = trim(p.Raw, s.Fields)
		}
		kept = append(kept, p)
	}
	return kept, nil
}

func (s Selection) matches(raw []byte) bool {
	for _, f := range s.Filters {
		v, _ := Member(raw, f.Field)
		if !holds(v, f.Values) {
			return false
		}
	}
	return true
}

// holds reports whether the JSON value v is, or is an array holding, a
// string or scalar whose text is one of values.
func holds(v []byte, values []string) bool {
	switch jsonscan.FirstByte(v) {
	case 0, '{', 'n':
		return false
	case '"':
		return slices.Contains(values, jsonscan.Unquote(v))
	case '[':
		found := false
		jsonscan.EachElement(v, func(elem []byte) bool {
			found = jsonscan.FirstByte(elem) != '[' && holds(elem, values)
			return !found
		})
		return found
	}
	return slices.Contains(values, string(bytes.TrimSpace(v)))
}

// carried fails with a *MemberError when no profile carries path.
func carried(profiles []Profile, argument string, index int, path string) error {
	for _, p := range profiles {
		if _, ok := Member(p.Raw, path); ok {
			return nil
		}
	}
	// Say what the records carry where the path fails: under the longest
	// prefix of it that some record has as an object.
	segs := strings.Split(path, ".")
	prefix := segs[:0]
	for n := len(segs) - 1; n > 0; n-- {
		if anyObjectAt(profiles, strings.Join(segs[:n], ".")) {
			prefix = segs[:n]
			break
		}
	}
	names := map[string]bool{}
	for _, p := range profiles {
		for _, obj := range [][]byte{p.Raw, attributesOf(p.Raw)} {
			if len(prefix) > 0 {
				obj, _ = jsonscan.Walk(obj, strings.Join(prefix, "."))
			}
			if jsonscan.FirstByte(obj) != '{' {
				continue
			}
			jsonscan.EachField(obj, func(lit, _ []byte) bool {
				names[strings.Join(append(slices.Clone(prefix), jsonscan.Unquote(lit)), ".")] = true
				return true
			})
		}
	}
	delete(names, "attributes")
	e := &MemberError{Argument: argument, Index: index, Member: path, Profiles: len(profiles)}
	for name := range names {
		e.Carried = append(e.Carried, name)
	}
	slices.Sort(e.Carried)
	e.Suggestion = closest(path, e.Carried)
	return e
}

func anyObjectAt(profiles []Profile, path string) bool {
	for _, p := range profiles {
		if v, ok := Member(p.Raw, path); ok && jsonscan.FirstByte(v) == '{' {
			return true
		}
	}
	return false
}

// closest is the name that differs from s only in case, or else by at most
// two edits, the fewest first; "" when none does.
func closest(s string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if strings.EqualFold(n, s) {
			return n
		}
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// pathTree is the members a trimmed record keeps: a leaf keeps the whole
// value, a branch the kept members of an object.
type pathTree map[string]pathTree

// trim returns the record raw with only the members at fields and the one
// holding its key, each found where member finds it, in the record's own
// order and bytes.
func trim(raw []byte, fields []string) []byte {
	keep := pathTree{}
	for _, path := range append([]string{KeyField}, fields...) {
		_, full, ok := Locate(raw, path)
		if !ok {
			continue
		}
		node := keep
		segs := strings.Split(full, ".")
		for i, seg := range segs {
			child, ok := node[seg]
			if ok && child == nil {
				break // kept whole already
			}
			if i == len(segs)-1 {
				node[seg] = nil
				break
			}
			if !ok {
				child = pathTree{}
				node[seg] = child
			}
			node = child
		}
	}
	return appendTrimmed(make([]byte, 0, 64), raw, keep)
}

func appendTrimmed(b, obj []byte, keep pathTree) []byte {
	b = append(b, '{')
	first := true
	jsonscan.EachField(obj, func(lit, v []byte) bool {
		child, ok := keep[jsonscan.Unquote(lit)]
		if !ok {
			return true
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(append(b, lit...), ':')
		if child == nil {
			b = append(b, v...)
		} else {
			b = appendTrimmed(b, v, child)
		}
		return true
	})
	return append(b, '}')
}
