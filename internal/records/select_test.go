package records

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// profiles decodes records, one per string.
func profiles(t *testing.T, records ...string) []Profile {
	t.Helper()
	var out []Profile
	for _, r := range records {
		p, ok, err := FromObject([]byte(r))
		if err != nil || !ok {
			t.Fatalf("%s: %v", r, err)
		}
		out = append(out, p)
	}
	return out
}

func keys(ps []Profile) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Key)
	}
	return out
}

var fleet = []string{
	`{"profile_key":"a","status":"active","proxy":{"country":"DE"},"port":3,"on":true,"tags":["eu","x"]}`,
	`{"profile_key":"b","status":"suspended","proxy":{"country":"AT"},"port":3.0,"on":false,"tags":[]}`,
	`{"profile_key":"c","status":"active","proxy":null,"port":"3","tags":[["eu"]]}`,
	`{"type":"browsers","id":"9","attributes":{"profile_key":"d","status":"active","proxy":{"country":"AT"}}}`,
}

func TestSelection_everyFilterMustMatchAndAnyValueMay(t *testing.T) {
	ps := profiles(t, fleet...)
	for name, tc := range map[string]struct {
		filters []Filter
		want    []string
	}{
		"a string":                 {[]Filter{{"status", []string{"active"}}}, []string{"a", "c", "d"}},
		"any value of a block":     {[]Filter{{"proxy.country", []string{"DE", "AT"}}}, []string{"a", "b", "d"}},
		"every block":              {[]Filter{{"status", []string{"active"}}, {"proxy.country", []string{"DE", "AT"}}}, []string{"a", "d"}},
		"a number by its JSON":     {[]Filter{{"port", []string{"3"}}}, []string{"a", "c"}},
		"a boolean by its JSON":    {[]Filter{{"on", []string{"false"}}}, []string{"b"}},
		"an array's element":       {[]Filter{{"tags", []string{"eu"}}}, []string{"a"}},
		"an object matches none":   {[]Filter{{"proxy", []string{"DE"}}}, nil},
		"null matches none":        {[]Filter{{"proxy", []string{"null"}}}, nil},
		"none of those carrying":   {[]Filter{{"status", []string{"retired"}}}, nil},
		"JSON:API attributes":      {[]Filter{{"id", []string{"9"}}}, []string{"d"}},
		"no filter keeps them all": {nil, []string{"a", "b", "c", "d"}},
	} {
		got, err := Selection{Filters: tc.filters}.Apply(ps)
		if err != nil || !slices.Equal(keys(got), tc.want) {
			t.Errorf("%s: kept %q (%v), want %q", name, keys(got), err, tc.want)
		}
	}
}

func TestSelection_fieldsTrimEachRecordKeepingItsKey(t *testing.T) {
	ps := profiles(t, fleet...)
	got, err := Selection{Fields: []string{"status", "proxy.country"}}.Apply(ps)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"profile_key":"a","status":"active","proxy":{"country":"DE"}}`,
		`{"profile_key":"b","status":"suspended","proxy":{"country":"AT"}}`,
		`{"profile_key":"c","status":"active"}`,
		`{"attributes":{"profile_key":"d","status":"active","proxy":{"country":"AT"}}}`,
	}
	for i, p := range got {
		if string(p.Raw) != want[i] {
			t.Errorf("%s: raw_json %s, want %s", p.Key, p.Raw, want[i])
		}
	}
	// Without fields, every record is as the service sent it.
	whole, _ := Selection{Filters: []Filter{{"status", []string{"suspended"}}}}.Apply(ps)
	if len(whole) != 1 || string(whole[0].Raw) != fleet[1] {
		t.Errorf("unfiltered fields: %q", whole)
	}
}

func TestSelection_aMemberNoProfileCarriesFails(t *testing.T) {
	ps := profiles(t, fleet...)
	for name, tc := range map[string]struct {
		sel      Selection
		argument string
		index    int
		carried  string
		suggest  string
	}{
		"a typo in a filter":      {Selection{Filters: []Filter{{"status", []string{"active"}}, {"stauts", []string{"active"}}}}, "filter", 1, "id, on, port, profile_key, proxy, status, tags, type", "status"},
		"a nested typo in fields": {Selection{Fields: []string{"proxy.contry"}}, "fields", 0, "proxy.country", "proxy.country"},
		"case":                    {Selection{Fields: []string{"Status"}}, "fields", 0, "id, on, port", "status"},
		"nothing close":           {Selection{Fields: []string{"owner"}}, "fields", 0, "status, tags, type", ""},
	} {
		_, err := tc.sel.Apply(ps)
		var me *MemberError
		if !errors.As(err, &me) {
			t.Errorf("%s: err = %v, want a *MemberError", name, err)
			continue
		}
		if me.Argument != tc.argument || me.Index != tc.index || me.Profiles != 4 || me.Suggestion != tc.suggest ||
			!strings.Contains(strings.Join(me.Carried, ", "), tc.carried) {
			t.Errorf("%s: %+v", name, me)
		}
	}
	// A member some profile carries, even as null, is no mistake.
	if _, err := (Selection{Filters: []Filter{{"on", []string{"true"}}}}).Apply(ps); err != nil {
		t.Errorf("a member one profile carries: %v", err)
	}
	// An empty list has nothing to check, and stays empty.
	if got, err := (Selection{Fields: []string{"anything"}}).Apply(nil); err != nil || len(got) != 0 {
		t.Errorf("an empty list: %v %v", got, err)
	}
}
