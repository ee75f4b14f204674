package server

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// The search filter of GET /v1/jobs and of the dashboard's jobs page, read
// from the same query parameters: the page's form is the API's query.

// jobQueryKeys are the parameters of a job search, beside after, limit
// and count.
var jobQueryKeys = []string{"state", "queue", "kind", "tags", "args", "metadata", "order",
	"created_since", "created_until", "scheduled_since", "scheduled_until",
	"attempted_since", "attempted_until", "finished_since", "finished_until"}

// timeRanges are the time filters: the parameters' prefix and the field
// of drover.JobListParams each sets.
var timeRanges = []struct {
	name  string
	field func(*drover.JobListParams) *drovertype.TimeRange
}{
	{"created", func(p *drover.JobListParams) *drovertype.TimeRange { return &p.Created }},
	{"scheduled", func(p *drover.JobListParams) *drovertype.TimeRange { return &p.Scheduled }},
	{"attempted", func(p *drover.JobListParams) *drovertype.TimeRange { return &p.Attempted }},
	{"finished", func(p *drover.JobListParams) *drovertype.TimeRange { return &p.Finished }},
}

// jobQuery reads a search filter from q. Empty values filter nothing, as
// an empty queue always has. The Client checks the rest (a state's name, a
// range's order, args being an object) with errors that name the field.
func jobQuery(q url.Values) (drover.JobListParams, error) {
	p := drover.JobListParams{Queue: q.Get("queue"), Kind: q.Get("kind")}
	for _, v := range q["state"] {
		if v == "" {
			continue
		}
		for _, st := range strings.Split(v, ",") {
			p.States = append(p.States, drovertype.JobState(st))
		}
	}
	for _, v := range q["tags"] {
		if v == "" {
			continue
		}
		p.Tags = append(p.Tags, strings.Split(v, ",")...)
	}
	for _, f := range []struct {
		name string
		dst  *json.RawMessage
	}{{"args", &p.Args}, {"metadata", &p.Metadata}} {
		v := strings.TrimSpace(q.Get(f.name))
		if v == "" {
			continue
		}
		if !json.Valid([]byte(v)) {
			return p, badRequest("%s %.60q: must be a JSON object, such as {\"to\":\"a@example.com\"}", f.name, v)
		}
		*f.dst = json.RawMessage(v)
	}
	for _, r := range timeRanges {
		rng := r.field(&p)
		for _, b := range []struct {
			suffix string
			dst    *time.Time
		}{{"_since", &rng.From}, {"_until", &rng.To}} {
			v := q.Get(r.name + b.suffix)
			if v == "" {
				continue
			}
			t, err := parseQueryTime(v)
			if err != nil {
				return p, badRequest("%s%s %q: must be a time in RFC 3339, such as 2026-01-02T15:04:05Z", r.name, b.suffix, v)
			}
			*b.dst = t
		}
	}
	switch q.Get("order") {
	case "", "asc":
	case "desc":
		p.NewestFirst = true
	default:
		return p, badRequest("order %q: use asc (oldest first) or desc (newest first)", q.Get("order"))
	}
	if q.Has("after") {
		v := q.Get("after")
		var err error
		if p.After, err = strconv.ParseInt(v, 10, 64); err != nil || p.After < 0 {
			return p, badRequest("after %q: must be a job id (a non-negative integer)", v)
		}
	}
	return p, nil
}

// parseQueryTime reads RFC 3339, or the minutes or seconds a browser's
// datetime-local input sends, in UTC.
func parseQueryTime(v string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Parse(time.RFC3339Nano, v)
}

// values writes p back as the query jobQuery reads, without after, for the
// links of the next page and the hidden fields of bulk forms.
func queryValues(p drover.JobListParams) url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	states := make([]string, len(p.States))
	for i, s := range p.States {
		states[i] = string(s)
	}
	set("state", strings.Join(states, ","))
	set("queue", p.Queue)
	set("kind", p.Kind)
	set("tags", strings.Join(p.Tags, ","))
	set("args", string(p.Args))
	set("metadata", string(p.Metadata))
	for _, r := range timeRanges {
		rng := r.field(&p)
		if !rng.From.IsZero() {
			v.Set(r.name+"_since", rng.From.UTC().Format(time.RFC3339Nano))
		}
		if !rng.To.IsZero() {
			v.Set(r.name+"_until", rng.To.UTC().Format(time.RFC3339Nano))
		}
	}
	if p.NewestFirst {
		v.Set("order", "desc")
	}
	return v
}
