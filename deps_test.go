package drover_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryDependencies keeps the library's packages free of what only
// the CLI, the server and the bench need: an application that imports
// Drover and one of its drivers must not compile a CLI framework, a fault
// proxy, a browser driver or an OpenAPI validator into its binary.
func TestLibraryDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	forbidden := []string{
		"github.com/spf13/cobra",
		"github.com/Shopify/toxiproxy",
		"github.com/chromedp/",
		"github.com/getkin/kin-openapi",
		"github.com/HdrHistogram/",
		"github.com/prometheus/",
		"github.com/rs/zerolog",
	}
	for _, pkg := range []string{".", "./droverpg", "./droversqlite"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for dep := range strings.Lines(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, strings.TrimSpace(dep))
				}
			}
		}
	}
}
