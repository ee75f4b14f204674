package server

import (
	"log"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Defaults of the HTTP server's limits (Config).
const (
	// ReadHeaderTimeoutDefault bounds how long a client may take to send
	// its request line and headers: a connection that trickles them ties
	// up a connection slot and a goroutine for nothing.
	ReadHeaderTimeoutDefault = 10 * time.Second
	// ReadTimeoutDefault bounds reading a whole request, body included:
	// time for the largest body (MaxBodyBytesDefault) over a slow link.
	ReadTimeoutDefault = time.Minute
	// WriteTimeoutDefault bounds writing a response, counted from the end
	// of the request's headers. A long-polling claim extends it by its
	// wait (see holdFor), so it need not cover MaxWait.
	WriteTimeoutDefault = time.Minute
	// IdleTimeoutDefault is how long a kept-alive connection may wait for
	// its next request before the server closes it, so that idle clients
	// do not hold connection slots (and file descriptors) for good.
	IdleTimeoutDefault = 2 * time.Minute
	// MaxConnectionsDefault caps open connections well under the usual
	// file descriptor limit (1024 soft on many systems, raised by Go to
	// the hard limit), leaving descriptors for the store and the logs.
	MaxConnectionsDefault = 1000
)

// HTTPServer returns an http.Server for the handler with the configured
// timeouts. Serve it on Listener(ln), which caps the connections.
// errorLog receives the server's own errors (TLS handshakes, bad
// requests); nil means the standard logger.
func (s *Server) HTTPServer(errorLog *log.Logger) *http.Server {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          errorLog,
	}
	// Shutdown waits for open requests but does not cancel them: without
	// this, a long poll would hold the shutdown for up to its whole wait.
	hs.RegisterOnShutdown(s.Drain)
	return hs
}

// Listener wraps ln so that at most Config.MaxConnections connections are
// open at once. Past the cap, new connections wait in the kernel's accept
// queue until one closes, instead of each taking a file descriptor and a
// goroutine: with the timeouts above, slots held by idle or stalled
// clients come free, and /healthz and /readyz stay answerable.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return netutil.LimitListener(ln, s.cfg.MaxConnections)
}

// holdFor extends the connection's read and write deadlines by a long
// poll's wait, since the server-wide timeouts are shorter than the longest
// poll by design. The read deadline matters too: once the body is read,
// the server watches the connection for the client going away, and a
// read deadline passing there would cancel the poll.
func (s *Server) holdFor(w http.ResponseWriter, wait time.Duration) {
	if wait <= 0 {
		return
	}
	rc := http.NewResponseController(w)
	now := time.Now()
	// Writers that cannot set deadlines (a test recorder) have none to
	// extend either, so errors are ignored.
	_ = rc.SetReadDeadline(now.Add(wait + s.cfg.ReadTimeout))
	_ = rc.SetWriteDeadline(now.Add(wait + s.cfg.WriteTimeout))
}
