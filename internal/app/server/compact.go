package server

import (
	"bytes"
	"encoding/json"
	"strconv"
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
//
// Both forms are written from one encoding of each job, member by member
// (claimJSON): the bytes encoding/json writes for a claimedJob, field by
// field, each member's bounds kept, so that the compact form compares and
// picks members without reading the JSON again. A job merged from its
// entry and "shared" is so its full form exactly. The members are written
// by hand rather than by encoding/json's reflection because a noop job's
// encoding was a third of the server's CPU per job outside the store;
// TestClaimJSONIsEncodingJSON holds the two to the same bytes.

// claimFields are the JSON keys of claimedJob in its fields' order (the
// embedded jobjson.Job's, then the dependant's), which encoding/json
// writes them in. claimJSON.add writes exactly these, in this order;
// TestClaimFieldsFollowTheStruct holds the list to the struct.
var claimFields = [...]string{"id", "state", "queue", "kind", "priority", "args", "metadata", "tags", "attempt",
	"max_attempts", "errors", "error_count", "timeout_ms", "created_at", "run_at", "attempted_at", "finalized_at",
	"lease_owner", "lease_expires_at", "cancel_requested", "batch_id", "key", "lease_token", "routing", "unroutable",
	"depends_on", "parent_results"}

// The members that are never shared: the id, which names an entry, and
// every array or object.
var notShared = func() [len(claimFields)]bool {
	var out [len(claimFields)]bool
	for i, k := range claimFields {
		switch k {
		case "id", "args", "metadata", "tags", "errors", "routing", "depends_on", "parent_results":
			out[i] = true
		}
	}
	return out
}()

// memberKeys are the keys as written, `"key":`, so that a member is its
// key's bytes and its value's.
var memberKeys = func() [len(claimFields)]string {
	var out [len(claimFields)]string
	for i, k := range claimFields {
		out[i] = strconv.Quote(k) + ":"
	}
	return out
}()

// claimJSON is the JSON of a claim's jobs, each as the members of its
// object, back to back in buf: job j's member f is buf[ends[f-1]:ends[f]]
// (from start for the first), empty when the field is left out
// (omitempty).
type claimJSON struct {
	buf  []byte
	jobs []jobMembers
}

type jobMembers struct {
	start int
	ends  [len(claimFields)]int
}

// member is job j's member f, `"key":value`, or nil when left out.
func (e *claimJSON) member(j, f int) []byte {
	m := &e.jobs[j]
	from := m.start
	if f > 0 {
		from = m.ends[f-1]
	}
	return e.buf[from:m.ends[f]]
}

// size is the length of job j's full form, `{…}`.
func (e *claimJSON) size(j int) int {
	m := &e.jobs[j]
	n, present := m.ends[len(claimFields)-1]-m.start, 0
	for f := range claimFields {
		if len(e.member(j, f)) > 0 {
			present++
		}
	}
	return 2 + n + max(present-1, 0)
}

// drop forgets the jobs from j on.
func (e *claimJSON) drop(j int) {
	if j < len(e.jobs) {
		e.buf = e.buf[:e.jobs[j].start]
		e.jobs = e.jobs[:j]
	}
}

// add encodes one job, member by member, as encoding/json would. The only
// error is a value JSON cannot hold (a time past year 9999), which
// encoding/json refuses too; the job is then left out.
func (e *claimJSON) add(c *claimedJob) error {
	m := jobMembers{start: len(e.buf)}
	b := e.buf
	f := 0
	// key starts member f; end closes it; skip leaves it out.
	key := func() { b = append(b, memberKeys[f]...) }
	end := func() { m.ends[f] = len(b); f++ }
	skip := end
	var err error
	str := func(s string) { key(); b = appendJSONString(b, s); end() }
	num := func(n int64) { key(); b = strconv.AppendInt(b, n, 10); end() }
	boolean := func(v bool) { key(); b = strconv.AppendBool(b, v); end() }
	tm := func(t *time.Time) {
		if t == nil {
			skip()
			return
		}
		key()
		b = append(b, '"')
		if out, terr := t.AppendText(b); terr == nil {
			b = out
		} else if err == nil {
			err = terr
		}
		b = append(b, '"')
		end()
	}
	value := func(v any) { // an array or object: encoding/json's own bytes
		key()
		out, merr := json.Marshal(v)
		if merr != nil && err == nil {
			err = merr
		}
		b = append(b, out...)
		end()
	}
	raw := func(r json.RawMessage) { key(); b = appendRaw(b, r, &err); end() }

	j := &c.Job
	num(j.ID)
	str(string(j.State))
	str(j.Queue)
	str(j.Kind)
	num(int64(j.Priority))
	raw(j.Args)
	if len(j.Metadata) > 0 {
		raw(j.Metadata)
	} else {
		skip()
	}
	if j.Tags == nil {
		key()
		b = append(b, "null"...)
		end()
	} else {
		key()
		b = append(b, '[')
		for i, t := range j.Tags {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, t)
		}
		b = append(b, ']')
		end()
	}
	num(int64(j.Attempt))
	num(int64(j.MaxAttempts))
	if len(j.Errors) == 0 && j.Errors != nil {
		key()
		b = append(b, "[]"...)
		end()
	} else {
		value(j.Errors)
	}
	num(int64(j.ErrorCount))
	if j.TimeoutMS != 0 {
		num(j.TimeoutMS)
	} else {
		skip()
	}
	tm(&j.CreatedAt)
	tm(&j.RunAt)
	tm(j.AttemptedAt)
	tm(j.FinalizedAt)
	if j.LeaseOwner != "" {
		str(j.LeaseOwner)
	} else {
		skip()
	}
	tm(j.LeaseExpiresAt)
	boolean(j.CancelRequested)
	if j.BatchID != 0 {
		num(j.BatchID)
	} else {
		skip()
	}
	for _, s := range []string{j.Key, j.LeaseToken} {
		if s != "" {
			str(s)
		} else {
			skip()
		}
	}
	if j.Routing != nil {
		value(j.Routing)
	} else {
		skip()
	}
	if j.Unroutable {
		boolean(true)
	} else {
		skip()
	}
	if len(c.DependsOn) > 0 {
		value(c.DependsOn)
	} else {
		skip()
	}
	if len(c.ParentResults) > 0 {
		value(c.ParentResults)
	} else {
		skip()
	}
	if err != nil {
		e.buf = b[:m.start]
		return err
	}
	e.buf = b
	e.jobs = append(e.jobs, m)
	return nil
}

// full writes the answer in the full form: {"jobs":[…]}.
func (e *claimJSON) full() []byte {
	out := make([]byte, 0, len(e.buf)+len(e.jobs)*(len(claimFields)+2)+16)
	out = append(out, `{"jobs":[`...)
	for j := range e.jobs {
		if j > 0 {
			out = append(out, ',')
		}
		out = e.appendJob(out, j, nil)
	}
	return append(out, "]}\n"...)
}

// compact writes the answer in the compact form: a member goes into
// "shared" when it is a scalar every job has, with the same bytes; a
// member some job leaves out (an empty omitempty field) is never shared,
// so that no job gains a field by taking "shared"'s.
func (e *claimJSON) compact() []byte {
	var shared [len(claimFields)]bool
	out := make([]byte, 0, len(e.buf)/2+64)
	out = append(out, `{"shared":{`...)
	if len(e.jobs) > 0 {
		first := true
		for f := range claimFields {
			m := e.member(0, f)
			if notShared[f] || len(m) == 0 {
				continue
			}
			same := true
			for j := 1; j < len(e.jobs) && same; j++ {
				same = bytes.Equal(e.member(j, f), m)
			}
			if same {
				if !first {
					out = append(out, ',')
				}
				first, shared[f] = false, true
				out = append(out, m...)
			}
		}
	}
	out = append(out, `},"jobs":[`...)
	for j := range e.jobs {
		if j > 0 {
			out = append(out, ',')
		}
		out = e.appendJob(out, j, &shared)
	}
	return append(out, "]}\n"...)
}

// appendJob appends job j's object, without the members skip marks.
func (e *claimJSON) appendJob(out []byte, j int, skip *[len(claimFields)]bool) []byte {
	out = append(out, '{')
	first := true
	for f := range claimFields {
		m := e.member(j, f)
		if len(m) == 0 || skip != nil && skip[f] {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, m...)
	}
	return append(out, '}')
}

// appendRaw appends the caller's own JSON (args, metadata) as encoding/json
// writes a json.RawMessage: compacted, with <, >, & and the line
// separators U+2028 and U+2029 escaped, "null" for none. JSON that needs
// neither is copied once it is found valid; a store holds only valid JSON
// there, but a claim must never answer a body that is not JSON.
func appendRaw(b []byte, r json.RawMessage, err *error) []byte {
	if len(r) == 0 {
		return append(b, "null"...)
	}
	plain := true
	for _, c := range r {
		if c <= ' ' || c == '<' || c == '>' || c == '&' || c == 0xE2 { // 0xE2 leads U+2028 and U+2029
			plain = false
			break
		}
	}
	if plain && json.Valid(r) {
		return append(b, r...)
	}
	out, merr := json.Marshal(r)
	if merr != nil && *err == nil {
		*err = merr
	}
	return append(b, out...)
}
