package records

import "testing"

func TestFindByValue_suggestsTheKeyOfADisplayName(t *testing.T) {
	t.Parallel()
	ps := []Profile{
		{Key: "k1", Raw: []byte(`{"profile_key":"k1","name":"Marketing Team","labels":{"display":"Shared"}}`)},
		{Key: "K2", Raw: []byte(`{"profile_key":"K2","name":"Other"}`)},
	}
	cases := map[string]Match{
		"Marketing Team":  {Key: "k1", Field: "name"},
		"Shared":          {Key: "k1", Field: "labels.display"},
		"marketing team ": {Key: "k1", Field: "name"},
		"k2":              {Key: "K2", Field: "profile_key"},
	}
	for given, want := range cases {
		got := FindByValue(ps, given)
		if len(got) == 0 || got[0] != want {
			t.Errorf("%q: %+v, want %+v", given, got, want)
		}
	}
	if got := FindByValue(ps, "nothing"); len(got) != 0 {
		t.Errorf("nothing: %+v", got)
	}
}
