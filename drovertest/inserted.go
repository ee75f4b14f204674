package drovertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// InsertedOpts narrows the jobs an assertion matches: a job matches when
// it has every field set here. Zero fields match any job.
type InsertedOpts struct {
	Queue string
	// Priority, when not nil, is the job's priority (0 is a priority, so
	// it takes a pointer: &p, or new(2)).
	Priority    *int
	MaxAttempts int
	// Tags must all be among the job's tags.
	Tags []string
	// Metadata must be a JSON subset of the job's metadata (a map, a
	// struct or json.RawMessage): every key it has, the job's metadata
	// has with an equal value.
	Metadata any
	// ScheduledAt is the job's run_at, to the microsecond. A job inserted
	// without one runs at its insert's now: with a Clock, the clock's.
	ScheduledAt time.Time
	// State is the job's state (available, scheduled, pending, …).
	State drovertype.JobState
}

// Partial stands for the args of a job of kind JobKind whose args hold
// Fields, whatever their other fields: RequireInserted with Partial
// matches on those fields alone, where a typed args value also matches on
// its zero fields (all of its fields without omitempty). Nil Fields match
// any args of the kind.
type Partial struct {
	JobKind string
	Fields  map[string]any
}

// Kind implements drover.Args.
func (p Partial) Kind() string { return p.JobKind }

// MarshalJSON encodes the fields alone.
func (p Partial) MarshalJSON() ([]byte, error) {
	if p.Fields == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(p.Fields)
}

// UnmarshalJSON decodes a job's args into Fields, so that RequireInserted
// returns the matched job's args whole.
func (p *Partial) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &p.Fields) }

// Expected is one job of RequireManyInserted: its args (a typed value or
// a Partial) and what else it must have.
type Expected struct {
	Args drover.Args
	Opts *InsertedOpts
}

// RequireInserted checks that exactly one committed job of args' kind
// matches args (a JSON subset of its args, see Partial) and opts, and
// returns it with its args decoded. It fails the test when none or more
// than one does, listing the jobs of the kind the store holds.
func RequireInserted[T drover.Args](ctx context.Context, tb TB, d droverdriver.Driver, args T, opts *InsertedOpts) *drover.Job[T] {
	tb.Helper()
	return requireOne(ctx, tb, d.Executor(), args, opts)
}

// RequireInsertedTx is RequireInserted for the jobs tx sees: those
// inserted in the test's transaction (drover.Client.InsertTx) before it
// commits, with those committed. tx is the store's transaction type:
// pgx.Tx for droverpg, *sql.Tx for droversqlite.
func RequireInsertedTx[TTx any, T drover.Args](ctx context.Context, tb TB, d droverdriver.TxDriver[TTx], tx TTx, args T, opts *InsertedOpts) *drover.Job[T] {
	tb.Helper()
	return requireOne(ctx, tb, d.UnwrapExecutor(tx), args, opts)
}

// RequireNotInserted checks that no committed job of args' kind matches
// args and opts; with Partial{JobKind: k} and nil opts, that no job of
// kind k exists at all.
func RequireNotInserted[T drover.Args](ctx context.Context, tb TB, d droverdriver.Driver, args T, opts *InsertedOpts) {
	tb.Helper()
	requireNone(ctx, tb, d.Executor(), args, opts)
}

// RequireNotInsertedTx is RequireNotInserted for the jobs tx sees.
func RequireNotInsertedTx[TTx any, T drover.Args](ctx context.Context, tb TB, d droverdriver.TxDriver[TTx], tx TTx, args T, opts *InsertedOpts) {
	tb.Helper()
	requireNone(ctx, tb, d.UnwrapExecutor(tx), args, opts)
}

// RequireManyInserted checks that the jobs of the kinds want names are
// exactly want, in insert (ID) order: each job matches its Expected, and
// no other job of those kinds exists. It returns them in that order.
func RequireManyInserted(ctx context.Context, tb TB, d droverdriver.Driver, want []Expected) []*drovertype.JobRow {
	tb.Helper()
	return requireMany(ctx, tb, d.Executor(), want)
}

// RequireManyInsertedTx is RequireManyInserted for the jobs tx sees.
func RequireManyInsertedTx[TTx any](ctx context.Context, tb TB, d droverdriver.TxDriver[TTx], tx TTx, want []Expected) []*drovertype.JobRow {
	tb.Helper()
	return requireMany(ctx, tb, d.UnwrapExecutor(tx), want)
}

func requireOne[T drover.Args](ctx context.Context, tb TB, ex droverdriver.Executor, args T, opts *InsertedOpts) *drover.Job[T] {
	tb.Helper()
	m := newMatcher(tb, args, opts)
	jobs := jobsOfKinds(ctx, tb, ex, args.Kind())
	var found []*drovertype.JobRow
	for _, j := range jobs {
		if m.mismatch(j) == "" {
			found = append(found, j)
		}
	}
	switch len(found) {
	case 1:
		a, err := decodeArgs(args, found[0].EncodedArgs)
		if err != nil {
			tb.Fatalf("drovertest: job %d matched, but its args %s do not decode into %T: %v", found[0].ID, found[0].EncodedArgs, args, err)
		}
		return &drover.Job[T]{JobRow: found[0], Args: a}
	case 0:
		tb.Fatalf("drovertest: no job of kind %s matches %s%s", args.Kind(), m, describe(jobs, m))
	default:
		tb.Fatalf("drovertest: %d jobs of kind %s match %s, want one (narrow the options, or use RequireManyInserted):%s",
			len(found), args.Kind(), m, describe(found, nil))
	}
	return nil
}

func requireNone[T drover.Args](ctx context.Context, tb TB, ex droverdriver.Executor, args T, opts *InsertedOpts) {
	tb.Helper()
	m := newMatcher(tb, args, opts)
	var found []*drovertype.JobRow
	for _, j := range jobsOfKinds(ctx, tb, ex, args.Kind()) {
		if m.mismatch(j) == "" {
			found = append(found, j)
		}
	}
	if len(found) > 0 {
		tb.Fatalf("drovertest: %d jobs of kind %s match %s, want none:%s", len(found), args.Kind(), m, describe(found, nil))
	}
}

func requireMany(ctx context.Context, tb TB, ex droverdriver.Executor, want []Expected) []*drovertype.JobRow {
	tb.Helper()
	var kinds []string
	matchers := make([]*matcher, len(want))
	for i, w := range want {
		matchers[i] = newMatcher(tb, w.Args, w.Opts)
		if !slices.Contains(kinds, w.Args.Kind()) {
			kinds = append(kinds, w.Args.Kind())
		}
	}
	jobs := jobsOfKinds(ctx, tb, ex, kinds...)
	var all strings.Builder
	for i, m := range matchers {
		fmt.Fprintf(&all, "\n  %d: %s %s", i+1, want[i].Args.Kind(), m)
	}
	if len(jobs) != len(want) {
		tb.Fatalf("drovertest: %d jobs of kinds %s, want %d:%s\nthe store holds:%s", len(jobs), strings.Join(kinds, ", "),
			len(want), all.String(), describe(jobs, nil))
		return nil
	}
	for i, m := range matchers {
		if why := m.mismatch(jobs[i]); why != "" {
			tb.Fatalf("drovertest: job %d of %d (id %d) does not match %s %s: %s\nwant, in order:%s\nthe store holds:%s",
				i+1, len(want), jobs[i].ID, want[i].Args.Kind(), m, why, all.String(), describe(jobs, nil))
			return nil
		}
	}
	return jobs
}

// decodeArgs decodes raw into a value of want's type: T's, or, when T is
// an interface (a table of mixed kinds), want's dynamic type.
func decodeArgs[T drover.Args](want T, raw []byte) (T, error) {
	var a T
	if reflect.TypeOf(&a).Elem().Kind() != reflect.Interface {
		err := json.Unmarshal(raw, &a)
		return a, err
	}
	p := reflect.New(reflect.TypeOf(want))
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return a, err
	}
	reflect.ValueOf(&a).Elem().Set(p.Elem())
	return a, nil
}

// jobsOfKinds reads every job of kinds that ex sees, in ID order.
func jobsOfKinds(ctx context.Context, tb TB, ex droverdriver.Executor, kinds ...string) []*drovertype.JobRow {
	tb.Helper()
	var out []*drovertype.JobRow
	for _, kind := range kinds {
		p := droverdriver.ListParams{Kind: kind, Limit: 1000, Now: time.Now()}
		for {
			rows, err := ex.JobList(ctx, p)
			if err != nil {
				tb.Fatalf("drovertest: list jobs of kind %s: %v", kind, err)
			}
			for _, r := range rows {
				out = append(out, r)
			}
			if len(rows) < p.Limit {
				break
			}
			p.AfterID = rows[len(rows)-1].ID
		}
	}
	slices.SortFunc(out, func(a, b *drovertype.JobRow) int { return int(a.ID - b.ID) })
	return out
}

// matcher is one expected job: its args as decoded JSON, and its options.
type matcher struct {
	kind string
	args any
	opts InsertedOpts
	meta any
}

func newMatcher(tb TB, args drover.Args, opts *InsertedOpts) *matcher {
	tb.Helper()
	m := &matcher{kind: args.Kind()}
	if opts != nil {
		m.opts = *opts
	}
	var err error
	if m.args, err = decoded(args); err != nil {
		tb.Fatalf("drovertest: expected args %T: %v", args, err)
	}
	if m.opts.Metadata != nil {
		if m.meta, err = decoded(m.opts.Metadata); err != nil {
			tb.Fatalf("drovertest: expected metadata %T: %v", m.opts.Metadata, err)
		}
	}
	return m
}

// decoded returns v encoded as JSON and decoded again, so that a struct,
// a map and raw JSON compare alike (numbers as json.Number).
func decoded(v any) (any, error) {
	b, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return decodeJSON(b)
}

func decodeJSON(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	err := dec.Decode(&out)
	return out, err
}

// mismatch says why j does not match, or "" when it does.
func (m *matcher) mismatch(j *drovertype.JobRow) string {
	o := m.opts
	switch {
	case j.Kind != m.kind:
		return fmt.Sprintf("kind %s", j.Kind)
	case o.Queue != "" && j.Queue != o.Queue:
		return fmt.Sprintf("queue %s", j.Queue)
	case o.Priority != nil && j.Priority != *o.Priority:
		return fmt.Sprintf("priority %d", j.Priority)
	case o.MaxAttempts != 0 && j.MaxAttempts != o.MaxAttempts:
		return fmt.Sprintf("max attempts %d", j.MaxAttempts)
	case o.State != "" && j.State != o.State:
		return fmt.Sprintf("state %s", j.State)
	case !o.ScheduledAt.IsZero() && !j.RunAt.Equal(o.ScheduledAt.Truncate(time.Microsecond)):
		return fmt.Sprintf("scheduled at %s", j.RunAt.Format(time.RFC3339Nano))
	}
	for _, tag := range o.Tags {
		if !slices.Contains(j.Tags, tag) {
			return fmt.Sprintf("tags %q", j.Tags)
		}
	}
	if got, err := decodeJSON(j.EncodedArgs); err != nil || !subset(m.args, got) {
		return fmt.Sprintf("args %s", j.EncodedArgs)
	}
	if m.meta != nil {
		if got, err := decodeJSON(j.Metadata); err != nil || !subset(m.meta, got) {
			return fmt.Sprintf("metadata %s", j.Metadata)
		}
	}
	return ""
}

// subset reports whether want is a JSON subset of got: objects by key,
// recursively; anything else (arrays, strings, numbers) equal.
func subset(want, got any) bool {
	wm, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(want, got)
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, wv := range wm {
		gv, ok := gm[k]
		if !ok || !subset(wv, gv) {
			return false
		}
	}
	return true
}

// String describes what the matcher wants, for failure messages.
func (m *matcher) String() string {
	args, _ := json.Marshal(m.args)
	parts := []string{"args ⊇ " + string(args)}
	o := m.opts
	if o.Queue != "" {
		parts = append(parts, "queue "+o.Queue)
	}
	if o.Priority != nil {
		parts = append(parts, fmt.Sprintf("priority %d", *o.Priority))
	}
	if o.MaxAttempts != 0 {
		parts = append(parts, fmt.Sprintf("max attempts %d", o.MaxAttempts))
	}
	if o.State != "" {
		parts = append(parts, "state "+string(o.State))
	}
	if !o.ScheduledAt.IsZero() {
		parts = append(parts, "scheduled at "+o.ScheduledAt.Truncate(time.Microsecond).Format(time.RFC3339Nano))
	}
	if len(o.Tags) > 0 {
		parts = append(parts, fmt.Sprintf("tags ⊇ %q", o.Tags))
	}
	if m.meta != nil {
		meta, _ := json.Marshal(m.meta)
		parts = append(parts, "metadata ⊇ "+string(meta))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// describe lists jobs one a line, each with why it does not match m when
// m is not nil.
func describe(jobs []*drovertype.JobRow, m *matcher) string {
	if len(jobs) == 0 {
		return "\n  (no job of the kind)"
	}
	var b strings.Builder
	for _, j := range jobs {
		fmt.Fprintf(&b, "\n  job %d: %s, queue %s, priority %d, %s, run at %s, args %s", j.ID, j.Kind, j.Queue, j.Priority, j.State,
			j.RunAt.Format(time.RFC3339Nano), j.EncodedArgs)
		if m != nil {
			if why := m.mismatch(j); why != "" {
				fmt.Fprintf(&b, " (differs: %s)", why)
			}
		}
	}
	return b.String()
}
