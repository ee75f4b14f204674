package drover

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeTarget has fields of the kinds args commonly hold.
type decodeTarget struct {
	Seq   int64             `json:"seq"`
	Name  string            `json:"name,omitempty"`
	Tags  []string          `json:"tags,omitempty"`
	Attrs map[string]any    `json:"attrs,omitempty"`
	Inner *struct{ N int }  `json:"inner,omitempty"`
	Raw   json.RawMessage   `json:"raw,omitempty"`
	Extra map[string]string `json:"-"`
}

var decodeSeeds = []string{
	`{"seq":1}`, `{"seq":2,"name":"n","tags":["a","b"],"attrs":{"x":[1,{"y":null}]},"inner":{"N":3},"raw":[1,2]}`,
	` {"seq":3} `, "{\"seq\":4}\n", `{"seq":5} {"seq":6}`, `{"seq":7}x`, `{"seq":"eight"}`, `{"seq":9,"name":1}`,
	`{"seq":`, ``, `null`, `[]`, `"s"`, `{"unknown":true,"seq":10}`, `{"seq":1e3}`, `{"seq":11}}`,
	`{"name":"` + strings.Repeat("x", maxPooledArgs) + `"}`,
}

// sameAsUnmarshal decodes data with decodeArgs and with json.Unmarshal
// into fresh targets and fails unless both give the same value and the
// same error.
func sameAsUnmarshal(t *testing.T, data []byte) {
	t.Helper()
	var got, want decodeTarget
	gotErr, wantErr := decodeArgs(data, &got), json.Unmarshal(data, &want)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("decodeArgs(%q) error %v, json.Unmarshal error %v", data, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeArgs(%q) = %+v, json.Unmarshal = %+v", data, got, want)
	}
}

// TestDecodeArgsAsUnmarshal decodes each seed after each other seed, so
// that a pooled decoder left with input from one call would show it in
// the next, and checks every result against json.Unmarshal.
func TestDecodeArgsAsUnmarshal(t *testing.T) {
	for _, first := range decodeSeeds {
		for _, second := range decodeSeeds {
			sameAsUnmarshal(t, []byte(first))
			sameAsUnmarshal(t, []byte(second))
		}
	}
}

// FuzzDecodeArgs checks decodeArgs against json.Unmarshal on any input,
// each followed by a valid value that must still decode alike.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsUnmarshal(t, data)
		sameAsUnmarshal(t, []byte(`{"seq":42,"name":"after"}`))
	})
}

// BenchmarkDecodeArgs compares decodeArgs with json.Unmarshal on the args
// of a bench job.
func BenchmarkDecodeArgs(b *testing.B) {
	data := []byte(`{"seq":123456}`)
	type args struct {
		Seq    int64 `json:"seq"`
		At     int64 `json:"at,omitempty"`
		WorkNS int64 `json:"work_ns,omitempty"`
	}
	for _, bc := range []struct {
		name   string
		decode func([]byte, *args) error
	}{{"decodeArgs", decodeArgs[args]}, {"json.Unmarshal", func(b []byte, a *args) error { return json.Unmarshal(b, a) }}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var a args
				if err := bc.decode(data, &a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
