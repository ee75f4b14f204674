package main

import (
	"strings"
	"testing"
)

// TestVersionCommit: `drover version` names the commit, from the go tool's
// stamp or, where the build had none (go test has none), from the one
// linked in with -X main.commit; and says so when there is neither.
func TestVersionCommit(t *testing.T) {
	t.Run("unknown", func(t *testing.T) {
		r := runCLI(t, nil, "version")
		if r.code != exitOK || !strings.Contains(r.stdout, "revision  unknown (built without VCS information") {
			t.Fatalf("drover version:\n%s", r)
		}
		var v versionInfo
		decodeJSON(t, runCLI(t, nil, "version", "--json").stdout, &v)
		if v.Revision != "" || v.Module != "github.com/droverhq/drover" || v.Go == "" {
			t.Fatalf("drover version --json = %+v", v)
		}
	})
	t.Run("linked", func(t *testing.T) {
		saved, savedMod := commit, modified
		t.Cleanup(func() { commit, modified = saved, savedMod })
		commit, modified = "0123456789abcdef0123456789abcdef01234567", "true"
		r := runCLI(t, nil, "version")
		if r.code != exitOK || !strings.Contains(r.stdout, "revision  "+commit+" (modified)\n") {
			t.Fatalf("drover version:\n%s", r)
		}
		var v map[string]any
		decodeJSON(t, runCLI(t, nil, "version", "--json").stdout, &v)
		if v["revision"] != commit || v["modified"] != true {
			t.Fatalf("drover version --json = %v", v)
		}
	})
}
