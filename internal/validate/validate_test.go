package validate

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestJSONText: a JSON \u0000 escape, an unpaired surrogate escape
// and invalid UTF-8 are refused, naming the field and the byte offset,
// while an escaped backslash followed by the text u0000 and a proper
// surrogate pair are fine.
func TestJSONText(t *testing.T) {
	tests := []struct {
		name, json, want string // want "" means accepted
	}{
		{"plain", `{"a":"b","n":[1,2]}`, ""},
		{"escaped backslash then u0000", `{"a":"\\u0000"}`, ""},
		{"three backslashes make an escape", `{"a":"\\\u0000"}`, `contains \u0000 at byte 8`},
		{"NUL escape", `{"a":"x\u0000y"}`, `args: contains \u0000 at byte 7`},
		{"other escapes", `{"a":"\u0001\u00e9\n"}`, ""},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, ""},
		{"lone high surrogate", `{"a":"\ud83dx"}`, "unpaired surrogate escape"},
		{"high surrogate at the end", `"\ud83d"`, "unpaired surrogate escape"},
		{"lone low surrogate", `{"a":"\ude00"}`, "unpaired surrogate escape"},
		{"two high surrogates", `"\ud83d\ud83d"`, "unpaired surrogate escape"},
		{"invalid UTF-8", "\"\xff bad\"", "args: invalid UTF-8 at byte 1"},
		{"invalid UTF-8 first", "\xff", "args: invalid UTF-8 at byte 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := JSONText("args", []byte(tt.json))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("JSONText(%s) = %v, want nil", tt.json, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("JSONText(%s) = %v, want an input error containing %q", tt.json, err, tt.want)
			}
		})
	}
}

// TestSanitize: NUL and invalid UTF-8 become U+FFFD, and text over the
// bound is cut at a character boundary, marked, and within the bound.
func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"fine", "x y", 10, "x y"},
		{"NUL", "x\x00y", 10, "x\uFFFDy"},
		{"invalid UTF-8", "x\xffy", 10, "x\uFFFDy"},
		{"cut", "abcdefghij", 5, "ab…"},
		{"cut inside a character", "aé€€€", 7, "aé…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Sanitize(tt.in, tt.limit)
			if got != tt.want {
				t.Fatalf("Sanitize(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
			}
			if !utf8.ValidString(got) || len(got) > tt.limit || strings.ContainsRune(got, 0) {
				t.Fatalf("Sanitize(%q, %d) = %q: not storable or over the bound", tt.in, tt.limit, got)
			}
		})
	}
}

// TestTime: times before 1970 or after 9999 are refused, in UTC: an
// offset that takes 9999-12-31 into year 10000 counts.
func TestTime(t *testing.T) {
	tests := []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"now", time.Now(), true},
		{"epoch", MinTime, true},
		{"last second", MaxTime, true},
		{"1969", time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), false},
		{"year 0", time.Time{}.AddDate(-1, 0, 0), false},
		{"past 9999 by offset", time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -5*3600)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Time("run at", tt.at)
			if (err == nil) != tt.ok {
				t.Fatalf("Time(%s) = %v, want ok=%v", tt.at, err, tt.ok)
			}
		})
	}
}

// TestEchoIsShort: an error about a huge bad value repeats only its start.
func TestEchoIsShort(t *testing.T) {
	err := Owner(strings.Repeat("w", 8<<20))
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("Owner(8 MB) = %.300v (%d bytes), want a short error", err, len(err.Error()))
	}
}

// FuzzJSONText checks the escape scan against the decoder: JSON that
// JSONText accepts decodes to text without a NUL, and JSON holding a
// NUL once decoded is refused.
func FuzzJSONText(f *testing.F) {
	for _, seed := range []string{`"a"`, `"\u0000"`, `"\\u0000"`, `"\\\u0000"`, `{"a":["\u0000"]}`, `"\ud800\udc00"`,
		`"\ud800"`, `"\\\\\u0000"`, `"x\u00001"`, `["\\","\u0000"]`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return // JSONText is only given valid JSON
		}
		if err := JSONText("x", []byte(s)); err == nil && holdsNUL(v) {
			t.Fatalf("JSONText(%q) accepted JSON that decodes to a NUL", s)
		}
	})
}

// holdsNUL reports whether a decoded JSON value has a NUL in any string or
// object key.
func holdsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case []any:
		for _, e := range v {
			if holdsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) || holdsNUL(e) {
				return true
			}
		}
	}
	return false
}

// FuzzValidNames checks queue and kind validation against the rules they
// state, written as regular expressions.
func FuzzValidNames(f *testing.F) {
	queueRule := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,127}$`)
	kindRule := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.:/-]{0,254}$`)
	for _, seed := range []string{"", "default", "q", "emails.high", "a:b-c_d", "app/SendEmail", "-q", "_q", ".q", "/k",
		"q q", "q\n", "é", "qé", "Q9", strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("k", 255),
		strings.Repeat("k", 256), "a\x00", "a/b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []struct {
			what     string
			validate func(string) error
			rule     *regexp.Regexp
		}{
			{"queue", Queue, queueRule},
			{"kind", Kind, kindRule},
		} {
			err := c.validate(s)
			if want := c.rule.MatchString(s); (err == nil) != want {
				t.Fatalf("%s %q: error %v, want valid %v", c.what, s, err, want)
			}
			if err != nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.what)) {
				t.Fatalf("%s %q: error %q is not an input error naming the %s", c.what, s, err, c.what)
			}
		}
	})
}
