package drover

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
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

// echo quotes s for an error message, cut to its first maxEcho bytes.
func echo(s string) string {
	if len(s) <= maxEcho {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", s[:maxEcho])
}

// checkTime reports a time outside MinTime and MaxTime. what names the
// field in the error.
func checkTime(what string, t time.Time) error {
	if t.Before(MinTime) || t.After(MaxTime) {
		return invalidf("%s %s: out of range (%s to %s)", what, t.UTC().Format(time.RFC3339), MinTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339))
	}
	return nil
}

// checkInt32 reports a count that the stores keep in a 32-bit column:
// a larger one fails the whole statement it rides in.
func checkInt32(what string, n int) error {
	if n > math.MaxInt32 {
		return invalidf("%s %d: over the limit of %d", what, n, math.MaxInt32)
	}
	return nil
}

// checkText reports text a store cannot hold: invalid UTF-8 or a NUL
// character. what names the field in the error, which gives the byte
// offset rather than the value, since the value is what is broken.
func checkText(what, s string) error {
	if storable(s) {
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

// storable reports whether a store can hold s as text: valid UTF-8
// without NUL. Callers test it before they build a field's name for
// checkText, so that good input costs no allocation.
func storable(s string) bool {
	return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}

// checkJSONText reports encoded JSON a store cannot hold: invalid UTF-8,
// a \u0000 escape or an unpaired surrogate escape (\ud800 alone). data
// must be valid JSON otherwise; the check is a scan for a backslash-u,
// so plain JSON without escapes costs one pass of utf8.Valid and one of
// bytes.Index.
func checkJSONText(what string, data []byte) error {
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

// ValidateJSONText reports encoded JSON that a store cannot hold as text,
// or that a consumer in another language cannot decode: invalid UTF-8, a
// \u0000 escape or an unpaired surrogate escape. data must be valid JSON
// otherwise; what names the field in the error. Inserts check args and
// metadata with it; the HTTP API checks a message payload sent as JSON,
// which the library takes as bytes.
func ValidateJSONText(what string, data []byte) error { return checkJSONText(what, data) }

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

// sanitizeText makes s storable and bounded: NUL characters and invalid
// UTF-8 become U+FFFD, and text over limit bytes is cut at a character
// boundary (and ends with "…"). Attempt errors and traces go through it: they are recorded,
// not checked, because refusing a failure's message would lose the
// failure itself. Text that is already fine is returned as is, without
// a copy.
func sanitizeText(s string, limit int) string {
	if !storable(s) {
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

// truncated ends text that sanitizeText cut short, so that a reader knows
// the message goes on.
const truncated = "…"

// ValidateOwner reports whether name can be a lease owner: a remote
// worker's name (ClaimParams.Owner) or a client's Config.ID, which every
// job it claims stores.
func ValidateOwner(name string) error {
	if name == "" || len(name) > maxOwnerLen {
		return invalidf("owner %s: must be 1-%d bytes", echo(name), maxOwnerLen)
	}
	return checkText("owner", name)
}

// checkAttemptRef checks the job ID and attempt a remote worker names;
// attempts are 32-bit in both stores.
func checkAttemptRef(id int64, attempt int) error {
	if id < 1 {
		return invalidf("id %d: must be positive", id)
	}
	if attempt < 1 {
		return invalidf("attempt %d: must be at least 1 (use the attempt the job was claimed with)", attempt)
	}
	return checkInt32("attempt", attempt)
}

// checkRemoteResult checks the values of a remote result that would reach
// the store: its result JSON, its retry time and its max attempts. Error
// and trace text is not refused but made storable (encodeAttemptError).
func checkRemoteResult(r AttemptResult) error {
	if len(r.Result) > 0 {
		if err := checkJSONText("result", r.Result); err != nil {
			return err
		}
	}
	if !r.RetryAt.IsZero() {
		if err := checkTime("retry at", r.RetryAt); err != nil {
			return err
		}
	}
	return checkInt32("max attempts", r.MaxAttempts)
}
