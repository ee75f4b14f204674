package jsonmatch

import "testing"

// jsonContainsCases are documents and patterns with what PostgreSQL's
// jsonb @> answers for them (droverpg's TestJSONContainsAsPostgres asks
// PostgreSQL about the tricky ones).
var jsonContainsCases = []struct {
	doc, pattern string
	want         bool
}{
	{`{"a":1,"b":2}`, `{"a":1}`, true},
	{`{"a":1,"b":2}`, `{}`, true},
	{`{"a":1}`, `{"a":1,"b":2}`, false},
	{`{"a":1}`, `{"a":"1"}`, false},
	{`{"a":1}`, `{"a":1.0}`, true},
	{`{"a":10}`, `{"a":1e1}`, true},
	{`{"a":1.5}`, `{"a":1.50}`, true},
	{`{"a":{"b":{"c":true,"d":null}}}`, `{"a":{"b":{"d":null}}}`, true},
	{`{"a":{"b":1}}`, `{"a":{"b":1,"c":2}}`, false},
	{`{"a":[1,2,3]}`, `{"a":[3,1]}`, true},
	{`{"a":[1,2,3]}`, `{"a":[1,1]}`, true},
	{`{"a":[1,2,3]}`, `{"a":[4]}`, false},
	{`{"a":[1,2,3]}`, `{"a":1}`, false},
	{`{"a":[{"x":1,"y":2},{"x":3}]}`, `{"a":[{"x":3}]}`, true},
	{`{"a":[[1,2]]}`, `{"a":[[1]]}`, true},
	{`{"a":[]}`, `{"a":[]}`, true},
	{`{"a":null}`, `{"a":false}`, false},
	{`[1,2,3]`, `2`, true},
	{`[1,[2]]`, `[2]`, false},
	{`"a"`, `"a"`, true},
	{`{"a":"é"}`, `{"a":"\u00e9"}`, true},
}

func TestJSONContains(t *testing.T) {
	for _, tc := range jsonContainsCases {
		got, err := JSONContains([]byte(tc.doc), []byte(tc.pattern))
		if err != nil {
			t.Fatalf("%s @> %s: %v", tc.doc, tc.pattern, err)
		}
		if got != tc.want {
			t.Errorf("%s @> %s = %v, want %v", tc.doc, tc.pattern, got, tc.want)
		}
	}
	for _, bad := range [][2]string{{`{`, `{}`}, {`{}`, `{"a":`}, {`{} {}`, `{}`}} {
		if _, err := JSONContains([]byte(bad[0]), []byte(bad[1])); err == nil {
			t.Errorf("%s @> %s: no error", bad[0], bad[1])
		}
	}
}
