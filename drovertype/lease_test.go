package drovertype

import (
	"strings"
	"testing"
)

// TestLeaseTokenText: a token survives its text form, and any other text,
// the empty one included, is refused.
func TestLeaseTokenText(t *testing.T) {
	a, b := NewLeaseToken(), NewLeaseToken()
	if a.IsZero() || a == b {
		t.Fatalf("tokens %s and %s: want two distinct non-zero tokens", a, b)
	}
	text, _ := a.MarshalText()
	var back LeaseToken
	if err := back.UnmarshalText(text); err != nil || back != a || len(text) != 32 {
		t.Fatalf("round trip of %s: %s, %v", text, back, err)
	}
	// The empty text, like any other that is not 32 lower-case hex digits,
	// is malformed: a request without a token is refused, not taken for
	// the zero token.
	if err := back.UnmarshalText(nil); err == nil {
		t.Fatalf("empty text decoded as %s, want an error", back)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 32), strings.Repeat("0", 33), strings.ToUpper(string(text))} {
		if _, err := ParseLeaseToken(bad); err == nil {
			t.Errorf("ParseLeaseToken(%q) accepted", bad)
		}
	}
}
