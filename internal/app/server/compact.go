package server

import (
	"bytes"
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
//
// The compact form is cut from the full form's JSON of each job, which the
// claim encodes anyway to keep its answer within the byte budget: each
// member of a job's object is kept as the bytes encoding/json wrote, so
// that a job merged from its entry and "shared" is its full form exactly,
// and the server pays a scan of each job's bytes rather than a second
// encoding.

// member is one `"key":value` of a job's JSON object.
type member struct {
	key   string // the key as written, quotes included
	value []byte
	whole []byte // `"key":value`
}

// members splits the JSON object b, as encoding/json writes it (no space
// between tokens), into its top-level members.
func members(b []byte) []member {
	var out []member
	depth, inString, escaped := 0, false, false
	start, colon := 0, 0
	for i, c := range b {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ':' && depth == 1 && colon < start:
			colon = i
		case c == '{' || c == '[':
			depth++
			if depth == 1 {
				start = i + 1
			}
		case c == '}' || c == ']' || c == ',' && depth == 1:
			if depth == 1 && i > start {
				out = append(out, member{key: string(b[start:colon]), value: b[colon+1 : i], whole: b[start:i]})
				start = i + 1
			}
			if c != ',' {
				depth--
			}
		}
	}
	return out
}

// scalar reports whether a member's value is a string, number, boolean or
// null rather than an array or object.
func (m member) scalar() bool { return m.value[0] != '[' && m.value[0] != '{' }

// compactClaim writes the compact answer of jobs, each given as its full
// form's JSON. A scalar member goes into "shared" when every job has it,
// with the same bytes; a member some job leaves out (an empty omitempty
// field) is never shared, so that no job gains a field by taking
// "shared"'s. The job's id is never shared: it is what names an entry.
func compactClaim(jobs [][]byte) []byte {
	split := make([][]member, len(jobs))
	size := 0
	for i, b := range jobs {
		split[i] = members(b)
		size += len(b)
	}
	shared := map[string]bool{}
	var buf bytes.Buffer
	buf.Grow(size/2 + 64)
	buf.WriteString(`{"shared":{`)
	if len(split) > 0 {
		// Every job's members come in the struct's order, with some left
		// out: one cursor per job finds a key in one pass.
		cursor := make([]int, len(split))
		for _, m := range split[0] {
			same := m.key != `"id"` && m.scalar()
			for j := 1; j < len(split); j++ {
				ms := split[j]
				if cursor[j] < len(ms) && ms[cursor[j]].key == m.key {
					same = same && bytes.Equal(ms[cursor[j]].value, m.value)
					cursor[j]++
				} else {
					same = false // job j lacks the member
				}
			}
			if same {
				if len(shared) > 0 {
					buf.WriteByte(',')
				}
				shared[m.key] = true
				buf.Write(m.whole)
			}
		}
	}
	buf.WriteString(`},"jobs":[`)
	for j, ms := range split {
		if j > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('{')
		first := true
		for _, m := range ms {
			if shared[m.key] {
				continue
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			buf.Write(m.whole)
		}
		buf.WriteByte('}')
	}
	buf.WriteString("]}\n")
	return buf.Bytes()
}
