// Package validate holds the rules for values that come from outside
// Drover (callers, remote workers over HTTP, the CLI, handlers) before
// they reach a statement, each named by what it validates: Queue, Kind,
// Topic, Subscription, Owner, WorkerName, WorkerType, Labels, JSON, and
// the checks every stored value passes (Text, JSONText, Time, Int32). The
// library, the server and the CLI call the same rules, and every error
// wraps ErrInvalid (drover.ErrInvalid is the same value), so a caller
// tells bad input from a store failure with errors.Is.
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error about bad input (args, options,
// queue names): drover.ErrInvalid.
var ErrInvalid = errors.New("invalid input")

// invalidf returns an error wrapping ErrInvalid.
func invalidf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// Input limits the rules below apply.
const (
	// MaxOwnerLen bounds the worker ID stored as the lease owner.
	MaxOwnerLen = 255
	// MaxLabels bounds the labels of a worker or a job.
	MaxLabels     = 32
	maxLabelKey   = 63
	maxLabelValue = 255
	// maxJSONDepth bounds nesting of args and metadata.
	maxJSONDepth = 64
)

// Values from outside (callers, remote workers, handlers) are checked or
// made safe here before they reach a statement. A store refuses some
// values outright: PostgreSQL's text columns take no NUL byte and no
// invalid UTF-8, its jsonb takes no \u0000 escape and no unpaired
// surrogate escape, and a timestamp outside the range below fails to
// encode as JSON on the way out. One such value in a batched statement
// fails every job of the batch, so the values a job carries are checked
// when it enters (insert, remote calls) and made safe where Drover itself
// records them (attempt errors), so that one job can only ever fail
// itself.

// MinTime and MaxTime bound every time a caller gives: InsertOpts.RunAt,
// AttemptResult.RetryAt, and their HTTP forms. Before 1970 is never a
// schedule anyone means (and some stores read it back as another year);
// after 9999 has no RFC 3339 form, so a job holding it could not be shown
// as JSON.
var (
	MinTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// maxEcho bounds how much of a bad value an error message repeats: enough
// to recognise it, never a megabyte echoed back to the caller or the log.
const maxEcho = 64

// Echo quotes s for an error message, cut to its first maxEcho bytes.
func Echo(s string) string {
	if len(s) <= maxEcho {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", s[:maxEcho])
}

// Time reports a time outside MinTime and MaxTime. what names the
// field in the error.
func Time(what string, t time.Time) error {
	if t.Before(MinTime) || t.After(MaxTime) {
		return invalidf("%s %s: out of range (%s to %s)", what, t.UTC().Format(time.RFC3339), MinTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339))
	}
	return nil
}

// Int32 reports a count that the stores keep in a 32-bit column:
// a larger one fails the whole statement it rides in.
func Int32(what string, n int) error {
	if n > math.MaxInt32 {
		return invalidf("%s %d: over the limit of %d", what, n, math.MaxInt32)
	}
	return nil
}

// Text reports text a store cannot hold: invalid UTF-8 or a NUL
// character. what names the field in the error, which gives the byte
// offset rather than the value, since the value is what is broken.
func Text(what, s string) error {
	if Storable(s) {
		return nil
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return invalidf("%s: contains a NUL character at byte %d, which the store cannot hold", what, i)
	}
	if !utf8.ValidString(s) {
		return invalidf("%s: invalid UTF-8 at byte %d", what, invalidUTF8At([]byte(s)))
	}
	return nil
}

// Storable reports whether a store can hold s as text: valid UTF-8
// without NUL. Callers test it before they build a field's name for
// Text, so that good input costs no allocation.
func Storable(s string) bool {
	return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}

// JSONText reports encoded JSON a store cannot hold: invalid UTF-8,
// a \u0000 escape or an unpaired surrogate escape (\ud800 alone). data
// must be valid JSON otherwise; the check is a scan for a backslash-u,
// so plain JSON without escapes costs one pass of utf8.Valid and one of
// bytes.Index.
func JSONText(what string, data []byte) error {
	if !utf8.Valid(data) {
		return invalidf("%s: invalid UTF-8 at byte %d", what, invalidUTF8At(data))
	}
	if i := badEscape(data); i >= 0 {
		if bytes.HasPrefix(data[i:], []byte(`\u0000`)) {
			return invalidf(`%s: contains \u0000 at byte %d, which the store cannot hold`, what, i)
		}
		return invalidf(`%s: unpaired surrogate escape %s at byte %d, which the store cannot hold`, what, data[i:i+6], i)
	}
	return nil
}

// invalidUTF8At returns the offset of the first byte of b that does not
// start a valid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// badEscape returns the offset of the first \u escape in valid JSON that
// a store refuses (\u0000, or a surrogate without its pair), or -1. An
// escape is real only after an odd number of backslashes: `\\u0000` is an
// escaped backslash followed by the text u0000, which is fine.
func badEscape(data []byte) int {
	from := 0
	for {
		j := bytes.Index(data[from:], []byte(`\u`))
		if j < 0 {
			return -1
		}
		i := from + j
		from = i + 2
		slashes := 0
		for k := i; k >= 0 && data[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 0 || i+6 > len(data) {
			continue
		}
		r, ok := hex4(data[i+2 : i+6])
		switch {
		case !ok:
			continue
		case r == 0:
			return i
		case 0xDC00 <= r && r <= 0xDFFF:
			return i // a low surrogate with no high one before it
		case 0xD800 <= r && r <= 0xDBFF:
			if i+12 > len(data) || data[i+6] != '\\' || data[i+7] != 'u' {
				return i
			}
			if lo, ok := hex4(data[i+8 : i+12]); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return i
			}
			from = i + 12 // the pair's low half is not a lone one
		default:
			from = i + 6
		}
	}
}

// hex4 decodes the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Sanitize makes s storable and bounded: NUL characters and invalid
// UTF-8 become U+FFFD, and text over limit bytes is cut at a character
// boundary (and ends with "…"). Attempt errors and traces go through it: they are recorded,
// not checked, because refusing a failure's message would lose the
// failure itself. Text that is already fine is returned as is, without
// a copy.
func Sanitize(s string, limit int) string {
	if !Storable(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	if len(s) > limit {
		cut := limit - len(truncated)
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + truncated
	}
	return s
}

// truncated ends text that Sanitize cut short, so that a reader knows
// the message goes on.
const truncated = "…"

// Owner reports whether name can be a lease owner: a remote
// worker's name (ClaimParams.Owner) or a client's Config.ID, which every
// job it claims stores.
func Owner(name string) error {
	if name == "" || len(name) > MaxOwnerLen {
		return invalidf("owner %s: must be 1-%d bytes", Echo(name), MaxOwnerLen)
	}
	return Text("owner", name)
}

// Queue reports whether name can be a queue name.
func Queue(name string) error {
	if !validName(name, 128, "_.:-") {
		return invalidf("queue %s: use 1-128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", Echo(name))
	}
	return nil
}

// Kind reports whether kind can be a job kind.
func Kind(kind string) error {
	if !validName(kind, 255, "_.:/-") {
		return invalidf("kind %s: use 1-255 letters, digits, '_', '.', ':', '/' or '-', starting with a letter or digit", Echo(kind))
	}
	return nil
}

// validName reports whether s is 1 to max ASCII letters, digits or bytes
// of punct, starting with a letter or digit. Every job of a bulk insert is
// checked, so this is a loop rather than a regular expression, which
// measured a tenth of the insert path's CPU.
func validName(s string, max int, punct string) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || strings.IndexByte(punct, c) < 0) {
			return false
		}
	}
	return true
}

// JSON checks encoded JSON the way inserts do: well formed, within
// the size limit and nesting depth. what names the field in the error.
func JSON(what string, data []byte, limit int) error {
	if len(data) > limit {
		return invalidf("%s: %d bytes is over the limit of %d", what, len(data), limit)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				return invalidf("%s: invalid JSON at offset %d: %s", what, syn.Offset, syn.Error())
			}
			return invalidf("%s: invalid JSON at offset %d: %v", what, dec.InputOffset(), err)
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
				if depth > maxJSONDepth {
					return invalidf("%s: nested deeper than %d levels", what, maxJSONDepth)
				}
			} else {
				depth--
			}
		}
	}
	if !json.Valid(data) {
		return invalidf("%s: invalid JSON (%d bytes)", what, len(data))
	}
	return nil
}

// WorkerType reports whether name can be a worker type: the rules
// of queue names.
func WorkerType(name string) error {
	if !validName(name, 128, "_.:-") {
		return invalidf("worker type %s: use 1-128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", Echo(name))
	}
	return nil
}

// WorkerName reports whether name can be a worker name: the rules
// of a lease owner (a worker ID).
func WorkerName(name string) error {
	if name == "" || len(name) > MaxOwnerLen {
		return invalidf("worker name %s: must be 1-%d bytes", Echo(name), MaxOwnerLen)
	}
	return Text("worker name", name)
}

// Labels reports whether labels can be a worker's or a job's:
// at most MaxLabels, keys of 1-63 letters, digits, '_', '.', '/' or '-'
// starting with a letter or digit, values of at most 255 bytes of text.
func Labels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return invalidf("labels: %d is over the limit of %d", len(labels), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if !validName(k, maxLabelKey, "_./-") {
			return invalidf("label %s: keys are 1-%d letters, digits, '_', '.', '/' or '-', starting with a letter or digit", Echo(k), maxLabelKey)
		}
		v := labels[k]
		if len(v) > maxLabelValue {
			return invalidf("label %s: value of %d bytes is over the limit of %d", k, len(v), maxLabelValue)
		}
		if err := Text("label "+k, v); err != nil {
			return err
		}
	}
	return nil
}

// Topic reports whether name can be a topic name; it makes the
// name of the topic's retry queue ("topic:<topic>"), hence its length.
func Topic(name string) error {
	if !validName(name, 56, "_.-") {
		return invalidf("topic %s: use 1-56 letters, digits, '_', '.' or '-', starting with a letter or digit", Echo(name))
	}
	return nil
}

// Subscription reports whether name can be a subscription name.
func Subscription(name string) error {
	if !validName(name, 64, "_.-") {
		return invalidf("subscription %s: use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit", Echo(name))
	}
	return nil
}

// PeriodicName reports whether name can be a stored periodic job's name.
// Names are addressed in URL paths (/v1/periodic/{name}), so they keep to
// a queue name's characters; Go entries, never addressed by a client
// that typed them, keep the looser unique-key rules.
func PeriodicName(name string) error {
	if !validName(name, 128, "_.:-") {
		return invalidf("periodic job name %s: use 1-128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", Echo(name))
	}
	return nil
}
