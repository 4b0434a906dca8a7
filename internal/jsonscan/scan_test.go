package jsonscan

import (
	"slices"
	"testing"
)

func TestScan_walksWithoutDecoding(t *testing.T) {
	t.Parallel()
	body := []byte(` {"a": {"b": [1, "]", {"c": "x\"y"}]}, "k": "v", "k": "last", "n": null} `)
	var names []string
	EachField(body, func(lit, _ []byte) bool { names = append(names, Unquote(lit)); return true })
	if !slices.Equal(names, []string{"a", "k", "k", "n"}) {
		t.Errorf("fields %q", names)
	}
	if v, ok := Field(body, "k"); !ok || string(v) != `"last"` {
		t.Errorf(`Field "k" = %s %v, want the last of duplicates`, v, ok)
	}
	arr, _ := Walk(body, "a.b")
	var elems []string
	if n := EachElement(arr, func(e []byte) bool { elems = append(elems, string(e)); return true }); n != 3 ||
		!slices.Equal(elems, []string{"1", `"]"`, `{"c": "x\"y"}`}) {
		t.Errorf("%d elements %q", n, elems)
	}
	if c, _ := Field([]byte(elems[2]), "c"); Unquote(c) != `x"y` {
		t.Errorf("Unquote = %q", Unquote(c))
	}
	if s, isString := ScalarString([]byte(" 3.0 ")); isString || s != "3.0" {
		t.Errorf("ScalarString = %q %v", s, isString)
	}
	for _, path := range []string{"a.b.c", "k.x", "missing", "n.x"} {
		if v, ok := Walk(body, path); ok {
			t.Errorf("Walk %q found %s", path, v)
		}
	}
	if got := Keys(Object([]byte(`{"z":1,"data":2,"a":3}`)), []string{"data"}); !slices.Equal(got, []string{"data", "a", "z"}) {
		t.Errorf("Keys = %q", got)
	}
	if FirstByte([]byte(" \n\t")) != 0 || FirstByte([]byte(" [")) != '[' {
		t.Error("FirstByte")
	}
}

func TestValid_saysWhereTheJSONBreaks(t *testing.T) {
	t.Parallel()
	if err := Valid([]byte(`{"a":[1,2]}`)); err != nil {
		t.Errorf("valid JSON refused: %v", err)
	}
	if err := Valid([]byte(`{"a":`)); err == nil || err.Error() != "invalid JSON: unexpected end of JSON input" {
		t.Errorf("err = %v", err)
	}
}
