package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// running is a `drover serve` started by startServe.
type running struct {
	base   string
	stderr *syncBuffer
}

// startServe runs `drover serve` on a migrated SQLite store with args
// added, waits for it to announce its address, and stops it at the end of
// the test, failing it if the command did not exit cleanly.
func startServe(t *testing.T, args ...string) *running {
	t.Helper()
	f := setupSQLite(t).migrated(t)
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, append([]string{"serve", "--database-url", f.url}, args...), io.Discard, stderr,
			func(k string) string { return f.env[k] })
	}()
	addr := regexp.MustCompile(`serving on (https?://\S+)`)
	deadline := time.Now().Add(time.Minute)
	var base string
	for base == "" {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited with %d:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exited with %d:\n%s", code, stderr.String())
		}
	})
	return &running{base: base, stderr: stderr}
}

// tokenFile makes a token of scope and writes its line to a new tokens
// file, returning the file and the secret.
func tokenFile(t *testing.T, name, scope string) (string, string) {
	t.Helper()
	r := runCLI(t, nil, "serve", "token", "--name", name, "--scope", scope)
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, regexp.MustCompile(`drv_\S+`).FindString(r.stderr)
}

func status(t *testing.T, c *http.Client, url, secret string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their files and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "drover test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pool
}

// TestServeTLS: with --tls-cert and --tls-key the API answers over HTTPS
// only, and on loopback no warning about clear text is logged.
func TestServeTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	tokens, secret := tokenFile(t, "ops", "admin")
	s := startServe(t, "--listen", "127.0.0.1:0", "--tokens", tokens, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(s.base, "https://") {
		t.Fatalf("serve announced %s, want https", s.base)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if got := status(t, c, s.base+"/v1/stats", secret); got != http.StatusOK {
		t.Fatalf("stats over TLS = %d", got)
	}
	// Plain HTTP on the TLS port is not served.
	plain := "http://" + strings.TrimPrefix(s.base, "https://")
	if got := status(t, http.DefaultClient, plain+"/healthz", ""); got != http.StatusBadRequest {
		t.Fatalf("plain HTTP on the TLS port = %d, want 400", got)
	}
	if strings.Contains(s.stderr.String(), "without TLS") {
		t.Fatalf("warned about clear text on loopback with TLS:\n%s", s.stderr.String())
	}
}

// TestServeWarnsWithoutTLSOffLoopback: listening on every interface
// without TLS works but logs a warning; loopback without TLS does not.
func TestServeWarnsWithoutTLSOffLoopback(t *testing.T) {
	s := startServe(t, "--listen", "0.0.0.0:0")
	if !strings.Contains(s.stderr.String(), "non-loopback address without TLS") {
		t.Fatalf("no warning for 0.0.0.0 without TLS:\n%s", s.stderr.String())
	}
	s = startServe(t, "--listen", "127.0.0.1:0")
	if strings.Contains(s.stderr.String(), "without TLS") {
		t.Fatalf("warned on loopback:\n%s", s.stderr.String())
	}
}

// TestServeReloadsTokensOnSIGHUP: a token removed from the file stops
// working after SIGHUP, one added starts working, and a file that no
// longer parses keeps the tokens in force.
func TestServeReloadsTokensOnSIGHUP(t *testing.T) {
	tokens, oldSecret := tokenFile(t, "old", "admin")
	s := startServe(t, "--listen", "127.0.0.1:0", "--tokens", tokens, "--log-level", "info")
	if got := status(t, http.DefaultClient, s.base+"/v1/stats", oldSecret); got != http.StatusOK {
		t.Fatalf("stats with the old token = %d", got)
	}
	newFile, newSecret := tokenFile(t, "new", "admin")
	line, err := os.ReadFile(newFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, line, 0o600); err != nil {
		t.Fatal(err)
	}
	reloads := strings.Count(s.stderr.String(), "tokens reloaded")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the reload", func() bool { return strings.Count(s.stderr.String(), "tokens reloaded") > reloads })
	if got := status(t, http.DefaultClient, s.base+"/v1/stats", oldSecret); got != http.StatusUnauthorized {
		t.Fatalf("stats with the removed token = %d, want 401", got)
	}
	if got := status(t, http.DefaultClient, s.base+"/v1/stats", newSecret); got != http.StatusOK {
		t.Fatalf("stats with the added token = %d", got)
	}

	if err := os.WriteFile(tokens, []byte("broken line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the failed reload", func() bool { return strings.Contains(s.stderr.String(), "reloading tokens failed") })
	if got := status(t, http.DefaultClient, s.base+"/v1/stats", newSecret); got != http.StatusOK {
		t.Fatalf("stats after a failed reload = %d, want the tokens kept", got)
	}
}

// waitUntil polls cond until it holds, failing after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeSecurityFlags: the TLS pair goes together, and the connection
// cap must be positive.
func TestServeSecurityFlags(t *testing.T) {
	f := setupSQLite(t).migrated(t)
	certFile, _, _ := selfSigned(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", certFile}, "--tls-cert and --tls-key go together"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", certFile}, "--tls-cert/--tls-key"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--max-connections", "-1"}, "max connections -1"},
	} {
		if r := f.run(t, c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("drover %s:\n%s\nwant exit 2 naming %q", strings.Join(c.args, " "), r, c.want)
		}
	}
}
