package main

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/droverhq/drover/internal/app/server"
)

// TestServeTokenQueues: --queue, repeated, restricts the printed line to
// those queues, and bad restrictions are usage errors naming the problem.
func TestServeTokenQueues(t *testing.T) {
	r := runCLI(t, nil, "serve", "token", "--name", "billing", "--scope", "work", "--queue", "billing", "--queue", "invoices")
	if r.code != exitOK {
		t.Fatalf("serve token:\n%s", r)
	}
	if !strings.HasSuffix(strings.TrimSpace(r.stdout), " queues=billing,invoices") {
		t.Fatalf("stdout %q does not end in the restriction", r.stdout)
	}
	toks, err := server.ParseTokens(strings.NewReader(r.stdout))
	if err != nil || len(toks) != 1 || strings.Join(toks[0].Queues, ",") != "billing,invoices" {
		t.Fatalf("stdout %q does not parse to a token restricted to billing, invoices: %+v, %v", r.stdout, toks, err)
	}
	r = runCLI(t, nil, "serve", "token", "--name", "any", "--scope", "work")
	if r.code != exitOK || strings.Contains(r.stdout, "queues=") {
		t.Fatalf("a token without --queue must not be restricted:\n%s", r)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scope", "admin", "--queue", "a"}, "admin token cannot be restricted"},
		{[]string{"--scope", "work", "--queue", "-bad"}, "queue"},
		{[]string{"--scope", "work", "--queue", "a", "--queue", "a"}, `queue "a" is listed twice`},
		{[]string{"--scope", "work", "--queue", "*", "--queue", "a"}, `"*"`},
	} {
		args := append([]string{"serve", "token", "--name", "x"}, c.args...)
		if r := runCLI(t, nil, args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("drover %s:\n%s\nwant exit 2 naming %q and no line", strings.Join(args, " "), r, c.want)
		}
	}
}

// TestServeReloadsQueueRestriction: SIGHUP picks up a changed queues=
// field of a token whose secret stays the same.
func TestServeReloadsQueueRestriction(t *testing.T) {
	r := runCLI(t, nil, "serve", "token", "--name", "p", "--scope", "enqueue", "--queue", "a")
	secret := regexp.MustCompile(`drv_\S+`).FindString(r.stderr)
	path := t.TempDir() + "/tokens"
	if err := os.WriteFile(path, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--listen", "127.0.0.1:0", "--tokens", path, "--log-level", "info")
	list := func(queue string) int { return status(t, http.DefaultClient, s.base+"/v1/jobs?queue="+queue, secret) }
	if a, b := list("a"), list("b"); a != http.StatusOK || b != http.StatusForbidden {
		t.Fatalf("restricted to a: list a = %d, b = %d; want 200, 403", a, b)
	}
	line := strings.Replace(r.stdout, "queues=a", "queues=b", 1)
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	reloads := strings.Count(s.stderr.String(), "tokens reloaded")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the reload", func() bool { return strings.Count(s.stderr.String(), "tokens reloaded") > reloads })
	if a, b := list("a"), list("b"); a != http.StatusForbidden || b != http.StatusOK {
		t.Fatalf("restricted to b after reload: list a = %d, b = %d; want 403, 200", a, b)
	}
}
