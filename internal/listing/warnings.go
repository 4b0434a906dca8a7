package listing

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// What a complete list still tells the user: keys Terraform will respell,
// and records the service sent more than once. Every key quoted is the
// service's text, so it is redacted.

// nfcWarnings names the keys that are not in Unicode NFC. Terraform rewrites
// every string to NFC, so such a key reaches state in another spelling than
// the service's; and two keys that differ only in normalisation become one.
func nfcWarnings(profiles []records.Profile, index map[string]int, r *redact.Redactor) []string {
	var changed []string
	for _, p := range profiles {
		if !norm.NFC.IsNormalString(p.Key) {
			changed = append(changed, p.Key)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	// Only a key that changes can meet another: group the changed keys by
	// their NFC spelling, with the listed key already spelled so, if any.
	byNFC := map[string][]string{}
	for _, k := range changed {
		n := norm.NFC.String(k)
		if byNFC[n] == nil {
			if _, ok := index[n]; ok {
				byNFC[n] = []string{n}
			}
		}
		byNFC[n] = append(byNFC[n], k)
	}
	w := fmt.Sprintf("Terraform stores every string in Unicode NFC, and %d profile_key value(s) from the service are not: %s. "+
		"In state they take their NFC spelling (and so do their raw_json records); browserprofile_profile still reads each of them "+
		"by that spelling.", len(changed), quoteList(changed, 5, r, strconv.QuoteToASCII))
	var collide []string
	for _, keys := range byNFC {
		if len(keys) > 1 {
			collide = append(collide, keys...)
		}
	}
	if len(collide) > 0 {
		slices.Sort(collide)
		w += fmt.Sprintf(" Distinct keys become the same key that way: %s; a set of profile_keys (for_each) holds them once, "+
			"and a read by that key reaches only one of them. Ask the service's owners to send keys in NFC.", quoteList(collide, 6, r, strconv.QuoteToASCII))
	}
	return []string{w}
}

// duplicateWarnings explains keys the service sent more than once.
func duplicateWarnings(dupes int, conflicts []string, r *redact.Redactor) []string {
	var out []string
	if n := dupes - len(conflicts); n > 0 {
		out = append(out, fmt.Sprintf("The service sent %d record(s) again that it had already sent, unchanged (pages overlapping while the list changed?); each is kept once.", n))
	}
	if len(conflicts) > 0 {
		out = append(out, fmt.Sprintf("The service sent %d profile_key value(s) twice with different records; the first record of each is kept: %s.%s",
			len(conflicts), quoteList(conflicts, 5, r, strconv.Quote), invalidUTF8Note(conflicts)))
	}
	return out
}

// invalidUTF8Note explains keys that only became equal when the invalid
// UTF-8 in them was replaced: Terraform strings must be UTF-8.
func invalidUTF8Note(keys []string) string {
	for _, k := range keys {
		if strings.ContainsRune(k, '\uFFFD') {
			return " Keys holding U+FFFD were sent with invalid UTF-8, which Terraform cannot store; the invalid bytes were replaced, and distinct keys can become equal that way: ask the service's owners to send UTF-8."
		}
	}
	return ""
}

// quoteList quotes up to limit of the service's strings, masked, then says
// how many more. Keys that differ only in normalisation look alike, so their
// warnings quote with escapes (strconv.QuoteToASCII).
func quoteList(ss []string, limit int, r *redact.Redactor, quote func(string) string) string {
	q := make([]string, 0, limit)
	for _, s := range ss[:min(len(ss), limit)] {
		q = append(q, r.Redact(quote(s)))
	}
	if len(ss) > limit {
		q = append(q, fmt.Sprintf("and %d more", len(ss)-limit))
	}
	return strings.Join(q, ", ")
}
