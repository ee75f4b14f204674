package bench

import (
	"os"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/app/storeurl"
)

// TestCommandLineHidesPasswords checks the command a report prints (table,
// Markdown and JSON all carry it) for every place a database URL can hold a
// password: its user info and its query string, given as a flag or through
// DATABASE_URL.
func TestCommandLineHidesPasswords(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		url    string
		secret string
	}{
		{"flag with user info", []string{"bench", "burndown", "--database-url", "postgres://u:ui-secret@h/db"}, "postgres://u:ui-secret@h/db", "ui-secret"},
		{"flag with query password", []string{"bench", "burndown", "--database-url=postgres://u@h/db?password=qs-secret"}, "postgres://u@h/db?password=qs-secret", "qs-secret"},
		{"environment with query password", []string{"bench", "burndown"}, "postgres://u@h/db?sslmode=disable&password=env-secret", "env-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := os.Args
			t.Cleanup(func() { os.Args = saved })
			os.Args = append([]string{"drover"}, tt.args...)
			line := commandLine(storeurl.Target{Kind: storeurl.Postgres, URL: tt.url})
			if strings.Contains(line, tt.secret) {
				t.Fatalf("command line %q shows the password", line)
			}
			if !strings.Contains(line, "xxxxx") {
				t.Fatalf("command line %q does not mark the hidden password", line)
			}
		})
	}
}
