// Package sqlfile loads a driver's SQL: the named statements of its
// queries.sql (with the fragments several statements share, the variants
// of the claim statements and the descending variants of a listing) and
// its numbered migrations. Both bundled drivers load their statements
// through it; it is internal because no caller of a driver sees it, and a
// third driver may keep its SQL however suits its store.
package sqlfile

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/droverhq/drover/drovertype"
)

// queryVars are the placeholders ParseQueries replaces in every statement
// besides "{schema}": values that Go and SQL share.
var queryVars = map[string]string{
	"{errors_kept}": strconv.Itoa(drovertype.ErrorsKept),
}

// ParseQueries reads a file of named statements in the form
//
//	-- name: JobClaim
//	SELECT …;
//
// and returns them by name with every "{schema}" replaced by prefix and
// every placeholder of queryVars by its value. Keeping
// each driver's SQL in one such file lets a reader see every statement a
// store runs in one place, as SQL rather than Go strings.
//
// A block headed "-- fragment: name" is not a statement but a piece of
// SQL that several statements share (a filter, say): each "{name}" in a
// statement, or in a later fragment, is replaced by it, so that the piece
// is written once. A fragment's parameters keep their numbers wherever it
// is spliced.
func ParseQueries(src, prefix string) (map[string]string, error) {
	queries := make(map[string]string)
	var fragments [][2]string // {placeholder, SQL}, in file order
	var name string
	var fragment bool
	var body strings.Builder
	flush := func() error {
		if name == "" {
			return nil
		}
		q := strings.TrimSpace(body.String())
		q = strings.TrimSuffix(q, ";")
		body.Reset()
		if q == "" {
			return fmt.Errorf("query %s is empty", name)
		}
		for _, f := range fragments {
			q = strings.ReplaceAll(q, f[0], f[1])
		}
		if fragment {
			fragments = append(fragments, [2]string{"{" + name + "}", q})
			return nil
		}
		if _, dup := queries[name]; dup {
			return fmt.Errorf("query %s is defined twice", name)
		}
		q = strings.ReplaceAll(q, "{schema}", prefix)
		for k, v := range queryVars {
			q = strings.ReplaceAll(q, k, v)
		}
		queries[name] = q
		return nil
	}
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		rest, isQuery := strings.CutPrefix(trimmed, "-- name:")
		frag, isFragment := strings.CutPrefix(trimmed, "-- fragment:")
		if isQuery || isFragment {
			if err := flush(); err != nil {
				return nil, err
			}
			name, fragment = strings.TrimSpace(rest), isFragment
			if isFragment {
				name = strings.TrimSpace(frag)
			}
			continue
		}
		if name != "" {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	for name, q := range queries {
		for _, f := range fragments {
			if strings.Contains(q, f[0]) {
				return nil, fmt.Errorf("query %s uses fragment %s before it is defined", name, f[0])
			}
		}
	}
	return queries, nil
}

// LoadMigrations reads the numbered migrations NNN_name.up.sql in dir of
// fsys, lowest first, each with its NNN_name.down.sql when there is one,
// with every "{schema}" replaced by prefix.
func LoadMigrations(fsys fs.FS, dir, prefix string) ([]drovertype.Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ms []drovertype.Migration
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".up.sql")
		if !ok {
			continue
		}
		num, label, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", e.Name())
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		down, err := fs.ReadFile(fsys, path.Join(dir, name+".down.sql"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		ms = append(ms, drovertype.Migration{Version: v, Name: label, SQL: strings.ReplaceAll(string(body), "{schema}", prefix),
			Down: strings.ReplaceAll(string(down), "{schema}", prefix)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// ClaimAfterMarker is the comment in a driver's JobClaim statement where
// WithClaimAfter puts the ClaimParams.After condition.
const ClaimAfterMarker = "/*after*/"

// WithClaimAfter adds JobClaimAfter to q: JobClaim with cond (the driver's
// spelling of "(priority, run_at, id) > After") at ClaimAfterMarker, so
// that both claims come from one statement text.
func WithClaimAfter(q map[string]string, cond string) error {
	claim := q["JobClaim"]
	if !strings.Contains(claim, ClaimAfterMarker) {
		return fmt.Errorf("JobClaim has no %s marker", ClaimAfterMarker)
	}
	q["JobClaimAfter"] = strings.Replace(claim, ClaimAfterMarker, cond, 1)
	return nil
}

// WithClaimKinds adds JobClaimKinds and JobClaimKindsAfter to q: JobClaim
// with cond (the driver's spelling of "kind is one of Kinds") at
// ClaimAfterMarker, and with afterCond (the same after the After
// condition). JobClaim itself stays as it was, for claims of every kind.
func WithClaimKinds(q map[string]string, cond, afterCond string) error {
	return withClaimVariants(q, "JobClaimKinds", cond, afterCond)
}

// WithClaimExceptKinds adds JobClaimExcept and JobClaimExceptAfter to q,
// as WithClaimKinds adds its pair: cond is the driver's spelling of "kind
// is none of ExceptKinds" (ClaimParams.ExceptKinds: the kinds paused in
// the queue), for claims that name no kinds of their own.
func WithClaimExceptKinds(q map[string]string, cond, afterCond string) error {
	return withClaimVariants(q, "JobClaimExcept", cond, afterCond)
}

// withClaimVariants adds name and name+"After": JobClaim with cond and
// with afterCond at ClaimAfterMarker.
func withClaimVariants(q map[string]string, name, cond, afterCond string) error {
	claim := q["JobClaim"]
	if !strings.Contains(claim, ClaimAfterMarker) {
		return fmt.Errorf("JobClaim has no %s marker", ClaimAfterMarker)
	}
	q[name] = strings.Replace(claim, ClaimAfterMarker, cond, 1)
	q[name+"After"] = strings.Replace(claim, ClaimAfterMarker, afterCond, 1)
	return nil
}

// WithClaimSlots adds name+"Slots" to q: the claim statement name with
// each pair of edits applied (the first string of a pair replaced by the
// second, which must occur exactly once), so that a claim taken for
// several claimers at once (droverdriver.SlotClaimer: each row under one
// claimer's owner and token) comes from the one text of the claim it
// combines, which stays as it was for the claims of one claimer.
func WithClaimSlots(q map[string]string, name string, edits ...[2]string) error {
	s, ok := q[name]
	if !ok {
		return fmt.Errorf("no statement %s", name)
	}
	for _, e := range edits {
		if n := strings.Count(s, e[0]); n != 1 {
			return fmt.Errorf("%s: %q occurs %d times, not once", name, e[0], n)
		}
		s = strings.Replace(s, e[0], e[1], 1)
	}
	q[name+"Slots"] = s
	return nil
}

// DescMarker is the comment after an ORDER BY of a statement that
// WithDescending turns into DESC; "/*min*/min" becomes max there too, and
// "/*before*/<" (an ID that comes before another in the search's order)
// becomes >.
const DescMarker = "/*asc*/"

// WithDescending adds to q the statement desc: asc read the other way, with
// each DescMarker made DESC, each "/*min*/min" made max and each
// "/*before*/<" made >, so that a
// search's two orders come from one statement text (JobList and
// JobListDesc, JobIDNext and JobIDPrev).
func WithDescending(q map[string]string, asc, desc string) error {
	s, ok := q[asc]
	if !ok || !strings.Contains(s, DescMarker) {
		return fmt.Errorf("%s has no %s marker", asc, DescMarker)
	}
	s = strings.ReplaceAll(s, DescMarker, "DESC")
	s = strings.ReplaceAll(s, "/*min*/min", "max")
	q[desc] = strings.ReplaceAll(s, "/*before*/<", ">")
	return nil
}
