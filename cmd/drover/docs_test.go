package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestDocsQuoteTheLatestMigration keeps the messages the docs quote in step
// with the migrations: a new migration changes "(latest N)" in what the
// CLI prints, and the docs said "(latest 1)" while the tool said 8.
func TestDocsQuoteTheLatestMigration(t *testing.T) {
	latest := latestVersion(t)
	re := regexp.MustCompile(`\(latest (\d+)\)`)
	for _, path := range []string{"../../docs/operations.md", "../../README.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if n, _ := strconv.Atoi(m[1]); n != latest {
				t.Errorf("%s quotes %q; the latest migration is %d", path, m[0], latest)
			}
		}
	}
}
