package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLogFormatJSON checks that with --log-format json (or
// DROVER_LOG_FORMAT=json) everything the CLI writes to stderr is a JSON
// object a line, the final error included, with its exit code.
func TestLogFormatJSON(t *testing.T) {
	t.Parallel()
	f := setupSQLite(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		// last is the message of the last record.
		last string
	}{
		{"flag, failure", nil, []string{"--log-format", "json", "jobs", "get", "999"}, exitFailure, "job 999: job not found"},
		{"environment, failure", map[string]string{"DROVER_LOG_FORMAT": "json"}, []string{"jobs", "get", "999"}, exitFailure, "job 999: job not found"},
		{"environment, usage error before the flags are read", map[string]string{"DROVER_LOG_FORMAT": "json"},
			[]string{"jobs", "get", "1", "2"}, exitUsage, "get: too many arguments: want ID, got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.env, append([]string{"--database-url", f.url}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			var rec map[string]any
			for _, line := range lines {
				rec = nil
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("stderr line is not JSON: %s\n%s", line, r.stderr)
				}
			}
			if rec["level"] != "ERROR" || rec["msg"] != tc.last || rec["exit"] != float64(tc.code) {
				t.Errorf("last record %v, want level ERROR, msg %q, exit %d", rec, tc.last, tc.code)
			}
		})
	}

	r := runCLI(t, nil, "--log-format", "xml", "version")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--log-format "xml": use text or json`) {
		t.Errorf("--log-format xml: %s", r)
	}
}
