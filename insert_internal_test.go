package drover

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

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
			{"queue", ValidateQueue, queueRule},
			{"kind", ValidateKind, kindRule},
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
