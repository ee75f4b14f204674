package drover_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/validate"
)

// FuzzValidateJSON checks that the args validator never panics, accepts
// exactly what encoding/json accepts (within the depth bound), and names
// the field in every error.
func FuzzValidateJSON(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1}`, `[1,2,{"b":[null]}]`, `{"a":}`, `"x"`, ``, `{`, strings.Repeat("[", 70) + strings.Repeat("]", 70), `{"a":1}x`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := validate.JSON("args", data, drover.MaxArgsBytes)
		if err != nil {
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), "args") {
				t.Fatalf("error %q does not name the field or is not an input error", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
	})
}
