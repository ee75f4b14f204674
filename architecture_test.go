package drover_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureMapNamesEveryPackage checks ARCHITECTURE.md's package
// map against the tree: every directory of this module with Go code is
// named in the first column of a row, and every directory named there
// exists (the SDKs are directories without Go code), so that the map a newcomer reads first stays true as packages
// come and go.
func TestArchitectureMapNamesEveryPackage(t *testing.T) {
	t.Parallel()
	named := architectureMap(t)
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if path != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "node_modules") {
				return filepath.SkipDir
			}
			if path != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a module of its own (bench/peers/river, …)
				}
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dir := filepath.ToSlash(filepath.Dir(path))
			if dir == "." {
				dir = "drover"
			}
			if !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if !named[dir] {
			t.Errorf("package %s is not named in ARCHITECTURE.md's package map", dir)
		}
	}
	for name := range named {
		if _, err := os.Stat(name); name != "drover" && err != nil {
			t.Errorf("ARCHITECTURE.md's package map names %s, which is not here: %v", name, err)
		}
	}
	if len(dirs) < 20 {
		t.Fatalf("found only %d package directories: %v", len(dirs), dirs)
	}
}

// architectureMap returns the names in backquotes in the first column of
// ARCHITECTURE.md's package map ("`drover` (root)" is the root).
func architectureMap(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Package map")
	if start < 0 {
		t.Fatal("ARCHITECTURE.md has no \"## Package map\" section")
	}
	section := doc[start+len("## Package map"):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	quoted := regexp.MustCompile("`([^`]+)`")
	named := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "package" {
			continue
		}
		for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
			named[m[1]] = true
		}
	}
	return named
}

// TestBenchmarksDocIsAUserDoc holds docs/benchmarks.md to what a user
// reads: current figures and how to reproduce them, in at most 600 lines.
// Dated rounds go to docs/design/benchmarks-history.md.
func TestBenchmarksDocIsAUserDoc(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 600 {
		t.Fatalf("docs/benchmarks.md has %d lines, over 600: move dated rounds to docs/design/benchmarks-history.md", n)
	}
}
