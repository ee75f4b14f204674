package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// The compact form of a claim's answer (`"compact": true` in the claim):
// what every job of the answer has with the same value (its state, queue,
// lease owner, lease token and expiry, attempt, and for a backlog of one
// kind its kind and max_attempts) is sent once, in "shared", and each job
// of "jobs" carries only the rest. A worker takes a job to be its entry
// with every field the entry lacks taken from "shared". A noop job's JSON
// is mostly those repeated fields, and an SDK worker's cost per job is
// mostly reading and building JSON, so a claim of many jobs costs the
// worker less this way; the full form stays for every worker that does not
// ask.
//
// Only scalars (strings, numbers, booleans, times) are shared. Arrays and
// objects (args, metadata, tags, errors, a dependant's parents) stay in
// each job, even when equal: a worker that took them from "shared" would
// hand one value to several handlers, any of which may change it, or pay
// a deep copy per job, which costs more than the bytes saved.

// jsonField is one field of a claimed job's JSON: its name, where it is
// in claimedJob, and whether the full form leaves it out when empty.
type jsonField struct {
	name      string
	index     []int
	omitEmpty bool
	// scalar is true for a field whose JSON is a string, number, boolean
	// or time: the only ones the compact form shares.
	scalar bool
}

// claimedFields are the fields of claimedJob in the order the full form
// writes them, read once from its json tags, so that the compact form
// names every field the full one does, however jobjson.Job grows.
var claimedFields = jsonFields(reflect.TypeFor[claimedJob](), nil)

// jsonFields lists the JSON fields of a struct type as encoding/json
// writes them, with the fields of embedded untagged structs in place.
func jsonFields(t reflect.Type, prefix []int) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		tag, hasTag := f.Tag.Lookup("json")
		if f.Anonymous && !hasTag && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type, index)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, index: index, omitEmpty: strings.Contains(opts, "omitempty"), scalar: scalarJSON(f.Type)})
	}
	return out
}

// scalarJSON reports whether values of t encode as a JSON string, number,
// boolean or time (through a pointer or not).
func scalarJSON(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return t == reflect.TypeFor[time.Time]()
}

// emptyJSON reports whether encoding/json's omitempty leaves v out.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// compactClaim encodes claimed jobs in the compact form. A scalar field
// goes into "shared" when every job has it, with values equal in Go (and
// so in JSON); a field some job leaves out (an empty omitempty field) is never
// shared, so that no job gains a field by taking "shared"'s. The job's id
// is never shared: it is what names an entry.
func compactClaim(jobs []claimedJob) ([]byte, error) {
	vals := make([]reflect.Value, len(jobs))
	for i := range jobs {
		vals[i] = reflect.ValueOf(&jobs[i]).Elem()
	}
	shared := make([]bool, len(claimedFields))
	for i, f := range claimedFields {
		shared[i] = f.name != "id" && f.scalar && len(vals) > 0 && sameInAll(vals, f)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"shared":{`)
	first := true
	for i, f := range claimedFields {
		if shared[i] {
			if err := writeField(&buf, &first, f.name, vals[0].FieldByIndex(f.index)); err != nil {
				return nil, err
			}
		}
	}
	buf.WriteString(`},"jobs":[`)
	for j, v := range vals {
		if j > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('{')
		first = true
		for i, f := range claimedFields {
			fv := v.FieldByIndex(f.index)
			if shared[i] || f.omitEmpty && emptyJSON(fv) {
				continue
			}
			if err := writeField(&buf, &first, f.name, fv); err != nil {
				return nil, err
			}
		}
		buf.WriteByte('}')
	}
	buf.WriteString("]}\n")
	return buf.Bytes(), nil
}

// sameInAll reports whether every job has field f, with the same value.
func sameInAll(vals []reflect.Value, f jsonField) bool {
	v0 := vals[0].FieldByIndex(f.index)
	if f.omitEmpty && emptyJSON(v0) {
		return false
	}
	x := v0.Interface()
	for _, v := range vals[1:] {
		if !reflect.DeepEqual(x, v.FieldByIndex(f.index).Interface()) {
			return false
		}
	}
	return true
}

// writeField writes `"name":value` to an object under way.
func writeField(buf *bytes.Buffer, first *bool, name string, v reflect.Value) error {
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return err
	}
	if !*first {
		buf.WriteByte(',')
	}
	*first = false
	buf.WriteByte('"')
	buf.WriteString(name) // a Go tag's name: nothing to escape
	buf.WriteString(`":`)
	buf.Write(b)
	return nil
}
