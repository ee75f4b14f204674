package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWriteJSONNeverAnswersAnEmptyOK: a value that cannot be encoded (a
// time past year 9999, as a store could hold from before times were
// checked) is answered with a 500 whose JSON body says why, never with a
// 200 and an empty body.
func TestWriteJSONNeverAnswersAnEmptyOK(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, map[string]any{"run_at": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q is not a JSON error: %v", rec.Body, err)
	}
	if rec.Code != http.StatusInternalServerError || body.Status != rec.Code || !strings.Contains(body.Error, "year outside of range") {
		t.Fatalf("answer %d %+v, want a 500 naming the encoding error", rec.Code, body)
	}
}
