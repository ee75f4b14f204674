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

// TestLayers holds the tiers of internal/ that ARCHITECTURE.md describes:
// the applications (internal/app) are imported by cmd/drover and by each
// other only, and the test kit (internal/testkit) by tests, the
// applications, droverdrivertest and itself; the runtime never imports
// either.
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/droverhq/drover/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	may := map[string][]string{
		mod + "internal/app/":     {mod + "cmd/", mod + "internal/app/"},
		mod + "internal/testkit/": {mod + "internal/app/", mod + "internal/testkit/", mod + "droverdriver/droverdrivertest"},
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := fields[0]
		for _, imp := range fields[1:] {
			for tier, allowed := range may {
				if !strings.HasPrefix(imp, tier) {
					continue
				}
				checked++
				ok := false
				for _, a := range allowed {
					ok = ok || strings.HasPrefix(pkg, a)
				}
				if !ok {
					t.Errorf("%s imports %s: %s is imported only by %v", pkg, imp, tier, allowed)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package imports internal/app or internal/testkit: the check saw nothing")
	}
}
