package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureListsEveryCommand checks that ARCHITECTURE.md's row for
// cmd/drover lists every command a user sees at the top of the CLI, so
// that a command added to the CLI is added to the map too.
func TestArchitectureListsEveryCommand(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `cmd/drover` \\|([^|]*)\\|").FindStringSubmatch(string(b))
	if row == nil {
		t.Fatal("ARCHITECTURE.md has no package map row for cmd/drover")
	}
	listed := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z][a-z-]*`).FindAllString(row[1], -1) {
		listed[w] = true
	}
	c := &cli{getenv: func(string) string { return "" }}
	n := 0
	for _, cmd := range c.newRootCommand().Commands() {
		if cmd.Hidden || cmd.Name() == "help" || cmd.Name() == "completion" {
			continue
		}
		n++
		if !listed[cmd.Name()] {
			t.Errorf("drover %s is not listed in ARCHITECTURE.md's row for cmd/drover:%s", cmd.Name(), strings.TrimRight(row[1], " "))
		}
	}
	if n < 10 {
		t.Fatalf("the CLI has only %d commands", n)
	}
}
