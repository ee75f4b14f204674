package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// envTokens names the tokens file when --tokens is not given, so that a
// container can mount it without changing its command line.
const envTokens = "DROVER_TOKENS_FILE"

func (c *cli) serveCommand() *cobra.Command {
	var (
		listen     string
		tokensPath string
		maxBody    int64
		maxBatch   int
		maxWait    time.Duration
		sample     time.Duration
		otel       bool
		maxConns   int
		tlsCert    string
		tlsKey     string
		secure     bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API",
		Long: `serve answers the HTTP API on --listen: enqueue, claim and finish jobs from any
language, inspect, cancel and retry them. The API is described at /openapi.json.

Every request but GET /healthz needs a bearer token from the tokens file
(--tokens or $DROVER_TOKENS_FILE), which holds only hashes of tokens:
'drover serve token' makes one. The server also runs the store's maintenance
(returning the jobs of dead workers, pruning finished jobs).

On SIGHUP the tokens file is read again: removed tokens stop working at
once, and so do the dashboard sessions opened with them.

With --tls-cert and --tls-key the server speaks HTTPS. Without them, listen
on a loopback address, or put a TLS-terminating proxy in front (and pass
--secure-cookies); see docs/security.md.`,
		Example: `  drover serve token --name ci --scope enqueue >> tokens   # prints the secret on stderr
  drover serve --listen 127.0.0.1:8080 --tokens tokens`,
		Args: argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tokensPath == "" {
				tokensPath = c.getenv(envTokens)
			}
			if (tlsCert == "") != (tlsKey == "") {
				return usagef("--tls-cert and --tls-key go together: give both or neither")
			}
			tokens, err := readTokens(tokensPath)
			if err != nil {
				return usagef("%v", err)
			}
			if len(tokens) == 0 {
				c.logger.Warn("no tokens configured: only /healthz answers; make one with: drover serve token")
			}
			if tlsCert != "" {
				// Load now, so that a bad pair is a usage error before the
				// store is opened rather than a failure of the first
				// handshake.
				if _, err := tls.LoadX509KeyPair(tlsCert, tlsKey); err != nil {
					return usagef("--tls-cert/--tls-key: %v", err)
				}
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return listenError(listen, err)
			}
			defer ln.Close()
			if tlsCert == "" && !isLoopback(ln.Addr()) {
				c.logger.Warn("listening on a non-loopback address without TLS: tokens and dashboard sessions cross the network in clear text; "+
					"pass --tls-cert and --tls-key, or listen on 127.0.0.1 behind a TLS-terminating proxy (and pass --secure-cookies)",
					"addr", ln.Addr().String())
			}
			cfg := server.Config{Tokens: tokens, Logger: c.logger, MaxConnections: maxConns, SecureCookies: secure,
				MaxBodyBytes: maxBody, MaxBatch: maxBatch, MaxWait: maxWait, SampleInterval: sample}
			if otel {
				tp, err := newTracerProvider(cmd.Context())
				if err != nil {
					return err
				}
				defer func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = tp.Shutdown(ctx) // flushes the last spans
				}()
				cfg.TracerProvider = tp
			}
			return c.serve(cmd.Context(), ln, cfg, serveOptions{tokensPath: tokensPath, tlsCert: tlsCert, tlsKey: tlsKey})
		},
	}
	markNeedsStore(cmd)
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on")
	fl.StringVar(&tokensPath, "tokens", "", "tokens file: NAME SCOPES sha256:HEX [queues=Q,...] per line (default $"+envTokens+")")
	fl.Int64Var(&maxBody, "max-body", server.MaxBodyBytesDefault, "largest request body in bytes")
	fl.IntVar(&maxBatch, "max-batch", server.MaxBatchDefault, "most jobs, results or attempts in one request")
	fl.DurationVar(&maxWait, "max-wait", server.MaxWaitDefault, "longest long poll a claim may ask for")
	fl.BoolVar(&otel, "otel", false, "export OpenTelemetry traces over OTLP/HTTP, configured by the standard OTEL_EXPORTER_OTLP_* variables")
	fl.DurationVar(&sample, "sample-interval", server.SampleIntervalDefault, "how often queue figures are read from the store for metrics and the dashboard")
	fl.IntVar(&maxConns, "max-connections", server.MaxConnectionsDefault, "most client connections open at once; more wait to be accepted")
	fl.StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) file; needs --tls-key")
	fl.StringVar(&tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fl.BoolVar(&secure, "secure-cookies", false, "mark the dashboard cookie Secure although this server sees plain HTTP: a proxy in front terminates TLS")
	cmd.AddCommand(c.tokenCommand())
	return cmd
}

// readTokens reads the tokens file at path; no path means no tokens.
func readTokens(path string) ([]server.Token, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--tokens: %w", err)
	}
	defer f.Close()
	tokens, err := server.ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("--tokens %s: %w", path, err)
	}
	return tokens, nil
}

// isLoopback reports whether addr only accepts connections from this
// machine. An unspecified address (0.0.0.0, ::) accepts them from
// anywhere.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// serveOptions are what serve needs beyond the server's Config.
type serveOptions struct {
	tokensPath      string // read again on SIGHUP
	tlsCert, tlsKey string // HTTPS when set
}

// serve runs the API on ln until ctx ends, then shuts down gracefully:
// listening stops, open long polls answer at once with no jobs (the
// HTTP server's Shutdown drains the API server), other open requests get
// up to 10 s to finish, and the client writes what it holds.
func (c *cli) serve(ctx context.Context, ln net.Listener, cfg server.Config, opts serveOptions) error {
	st, err := c.openStore(ctx, true)
	if err != nil {
		return err
	}
	defer st.Close()
	client, err := storeurl.NewClient[storeClient](st, &drover.Config{Logger: c.logger, TracerProvider: cfg.TracerProvider})
	if err != nil {
		return err
	}
	cfg.Client, cfg.PoolStats, cfg.Shards = client, st.PoolStats, st.Shards
	if len(st.Target.Shards) > 1 {
		cfg.ShardURLs = st.Target.Shards
	}
	srv, err := server.New(cfg)
	if err != nil {
		return usagef("%v", err)
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(stopCtx)
	}()
	loopCtx, stopLoops := context.WithCancel(context.Background())
	loopsDone := make(chan struct{})
	go func() { defer close(loopsDone); srv.Run(loopCtx) }()
	defer func() { stopLoops(); <-loopsDone }()

	// Registered before the address is announced, so that a reload sent
	// once the server is up never meets the signal's default action,
	// which ends the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reloadDone := make(chan struct{})
	go func() { defer close(reloadDone); c.reloadTokens(loopCtx, hup, srv, opts.tokensPath) }()
	defer func() { stopLoops(); <-reloadDone }()

	hs := srv.HTTPServer(slog.NewLogLogger(c.logger.Handler(), slog.LevelWarn))
	scheme := "http"
	if opts.tlsCert != "" {
		scheme = "https"
	}
	c.logger.Info("drover serve listening", "addr", ln.Addr().String(), "tls", opts.tlsCert != "", "store", st.Target.Redacted(), "tokens", len(cfg.Tokens))
	fmt.Fprintf(c.stderr, "drover: serving on %s://%s\n", scheme, ln.Addr())
	errc := make(chan error, 1)
	go func() {
		if opts.tlsCert != "" {
			errc <- hs.ServeTLS(srv.Listener(ln), opts.tlsCert, opts.tlsKey)
			return
		}
		errc <- hs.Serve(srv.Listener(ln))
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// reloadTokens reads the tokens file again on each signal from hup, until
// ctx ends. A file that no longer parses keeps the tokens in force: a
// typo must not lock every client out.
func (c *cli) reloadTokens(ctx context.Context, hup <-chan os.Signal, srv *server.Server, path string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		tokens, err := readTokens(path)
		if err != nil {
			c.logger.Error("reloading tokens failed; the previous tokens stay in force", "error", err)
			continue
		}
		srv.SetTokens(tokens)
		c.logger.Info("tokens reloaded", "tokens", len(tokens))
	}
}

func (c *cli) tokenCommand() *cobra.Command {
	var (
		name   string
		scopes []string
		queues []string
	)
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make a new API token",
		Long: `token makes a random bearer token. It prints the line for the tokens file
(name, scopes, SHA-256 of the token) on stdout and the token itself on
stderr: the token is shown once and stored nowhere.

Scopes: enqueue (insert and read jobs), work (claim, heartbeat, finish),
admin (everything, including cancel, retry, stats and the dashboard).

--queue (repeatable) restricts an enqueue or work token to those queues:
it may enqueue, claim and read only their jobs. Admin tokens cannot be
restricted.`,
		Example: `  drover serve token --name billing-worker --scope work >> tokens
  drover serve token --name billing-worker --scope work --queue billing --queue invoices >> tokens`,
		Args: argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc := make([]server.Scope, len(scopes))
			for i, s := range scopes {
				sc[i] = server.Scope(strings.TrimSpace(s))
			}
			secret, tok, err := server.NewToken(name, sc)
			if err != nil {
				return usagef("%v", err)
			}
			if err := tok.Restrict(queues); err != nil {
				return usagef("--queue: %v", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "token for %s (shown once, keep it secret): %s\n", name, secret)
			_, err = fmt.Fprintln(cmd.OutOrStdout(), tok.Line())
			return err
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name of the token, shown in logs (required)")
	cmd.Flags().StringSliceVar(&scopes, "scope", nil, "scopes, comma-separated: enqueue, work, admin (required)")
	// StringArray, not StringSlice: a queue name cannot hold a comma
	// anyway, and one flag per queue keeps the error naming one name.
	cmd.Flags().StringArrayVar(&queues, "queue", nil, "restrict the token to this queue (repeatable; default: every queue)")
	return cmd
}

// newTracerProvider exports spans over OTLP/HTTP in batches. Where to (and
// headers, timeouts) comes from the standard OTEL_EXPORTER_OTLP_*
// environment variables, as every OpenTelemetry SDK reads them.
func newTracerProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("--otel: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "drover"))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
