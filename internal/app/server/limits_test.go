package server_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/app/server"
)

// serveLimited serves the bundle's server through its own http.Server and
// Listener, as `drover serve` does, and returns the address and a
// function reporting the most connections that were ever open at once.
func serveLimited(t *testing.T, b *bundle) (string, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Connections are counted beneath the server's limiting listener: it
	// frees a slot only after the connection it wraps is closed, so the
	// count here never sees a slot reused before its connection ended
	// (http.Server's ConnState reports the close after the slot is free,
	// and would race the next accept).
	counted := &countingListener{Listener: ln}
	hs := b.srv.HTTPServer(nil)
	go hs.Serve(b.srv.Listener(counted)) //nolint:errcheck // ends with Close
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String(), counted.peakOpen
}

// countingListener counts its open connections and their peak.
type countingListener struct {
	net.Listener
	mu         sync.Mutex
	open, peak int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.open++
	l.peak = max(l.peak, l.open)
	l.mu.Unlock()
	return &countedConn{Conn: c, l: l}, nil
}

func (l *countingListener) peakOpen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.peak
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return err
}

// get sends one request on a raw connection and reads its response.
func get(t *testing.T, conn net.Conn, r *bufio.Reader, path string) *http.Response {
	t.Helper()
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: drover\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestIdleConnectionIsClosed: a kept-alive connection that sends nothing
// after its request is closed by the server once the idle timeout
// passes, instead of holding its slot for good.
func TestIdleConnectionIsClosed(t *testing.T) {
	b := setup(t, stores[1].open, func(cfg *server.Config) { cfg.IdleTimeout = 50 * time.Millisecond })
	addr, _ := serveLimited(t, b)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if resp := get(t, conn, r, "/healthz"); resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("healthz = %d (close %v)", resp.StatusCode, resp.Close)
	}
	// Only a safety net for a server that never closes: the test waits
	// for the server's close, whenever it comes.
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	_, err = r.ReadByte()
	if !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: read returned %v, want EOF (closed by the server)", err)
	}
}

// TestConnectionCap: past MaxConnections, a new connection is not served
// until one of the open ones closes; /healthz is answered then.
func TestConnectionCap(t *testing.T) {
	const limit = 3
	b := setup(t, stores[1].open, func(cfg *server.Config) { cfg.MaxConnections = limit })
	addr, peak := serveLimited(t, b)
	var held []net.Conn
	for range limit {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Each holds its slot with a request that is still being sent.
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\n"); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	extra, err := net.Dial("tcp", addr) // the kernel accepts; the server must not
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	r := bufio.NewReader(extra)
	answered := make(chan *http.Response, 1)
	go func() {
		if _, err := io.WriteString(extra, "GET /healthz HTTP/1.1\r\nHost: drover\r\n\r\n"); err != nil {
			answered <- nil
			return
		}
		resp, _ := http.ReadResponse(r, nil)
		answered <- resp
	}()
	// Not served while the cap is reached: a request served at once
	// would have arrived by now. This only ever lets a broken cap pass,
	// never fails a working one.
	select {
	case <-answered:
		t.Fatal("a connection past the cap was served")
	case <-time.After(200 * time.Millisecond):
	}
	held[0].Close()
	resp := <-answered
	if resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the waiting connection's healthz = %v", resp)
	}
	if p := peak(); p > limit {
		t.Fatalf("%d connections were open at once, cap %d", p, limit)
	}
}

// TestLongPollOutlivesTimeouts: a claim may long-poll for longer than the
// server's read and write timeouts, which exist for everything else.
func TestLongPollOutlivesTimeouts(t *testing.T) {
	b := setup(t, stores[1].open, func(cfg *server.Config) {
		cfg.ReadTimeout, cfg.WriteTimeout = 100*time.Millisecond, 100*time.Millisecond
	})
	addr, _ := serveLimited(t, b)
	body := []byte(`{"queue":"default","worker":"w","wait_ms":600}`)
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/claim", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+b.tokens[server.ScopeWork])
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("long poll past the timeouts failed: %v", err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(got, []byte(`"jobs":[]`)) {
		t.Fatalf("long poll = %d: %s", resp.StatusCode, got)
	}
	// The poll ran its course: it was not cut at the timeouts.
	if time.Since(start) < 600*time.Millisecond {
		t.Fatalf("long poll answered after %v, before its wait", time.Since(start))
	}
}
