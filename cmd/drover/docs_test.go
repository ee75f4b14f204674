package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// TestReadmeGoProgramBuilds builds the README's Go program as a user who
// follows it would: a module of its own that depends on this checkout
// through the README's `go mod edit` line (the module is not on the Go
// module proxy), so that the program keeps its package clause and
// imports, and the replace keeps working, as the API changes. The user's
// `go mod tidy` fetches what the checkout's go.sum lists; the test copies
// that go.sum instead and builds offline (GOPROXY=off) from the module
// cache the checkout's own build filled.
func TestReadmeGoProgramBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, quick, ok := strings.Cut(string(readme), "## Quick start (Go)")
	if !ok {
		t.Fatal("README.md has no Quick start (Go) section")
	}
	program := fenced(t, quick, "go")
	edit := ""
	for _, line := range strings.Split(fenced(t, quick, "sh"), "\n") {
		if strings.HasPrefix(line, "go mod edit ") {
			edit = line
		}
	}
	if !strings.HasPrefix(program, "package main\n") || edit == "" {
		t.Fatalf("README.md's quick start: want a `go mod edit` line and a program starting with package main; got %q and\n%s", edit, program)
	}
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("mod", "init", "example.com/app")
	// The README's line, with the checkout where it says ../drover.
	args := strings.Fields(strings.ReplaceAll(edit, "=../drover", "="+checkout))
	run(args[1:]...)
	run("build", "-o", filepath.Join(dir, "app"), ".")
}

// fenced returns the first code block of text fenced as lang.
func fenced(t *testing.T, text, lang string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```"+lang+"\n")
	if !ok {
		t.Fatalf("no ```%s block", lang)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("unterminated ```%s block", lang)
	}
	return block
}
