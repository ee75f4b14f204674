// Package server is Drover's HTTP API (`drover serve`): JSON endpoints to
// enqueue jobs, to work them from another process or language (claim with
// long polling, extend leases, report results, all fenced by attempt
// exactly as for Go workers), to inspect, cancel and retry them, and the
// health checks. The API is described by openapi.json, which is embedded
// and served, and which the contract tests hold the handlers to.
//
// Every request but GET /healthz, GET /readyz and GET /openapi.json needs
// a bearer token whose scope allows it; every error is a JSON object whose message names the problem.
package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverprom"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/clientapi"
)

// storeUnavailable reports whether err says that the store cannot be
// reached at all, rather than that a statement failed: the store says so
// (drover.Store.Unavailable), or it did not answer before the deadline
// the server gave it. Such requests answer 503 with
// Retry-After, since the same request will likely succeed once the store
// is back.
func (s *Server) storeUnavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return s.store.Unavailable(err)
}

// OpenAPI is the API's description, served at /openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// finishedSettle is how far behind the sample the window of finished jobs
// ends: longer than a finishing transaction takes to commit.
const finishedSettle = time.Second

// Defaults for Config.
const (
	MaxBodyBytesDefault   = 8 << 20
	MaxBatchDefault       = 10_000
	MaxWaitDefault        = time.Minute
	SampleIntervalDefault = 5 * time.Second
	// MaxPageBytesDefault keeps an answer listing jobs or results to a
	// few megabytes of JSON, however large their args (each at most
	// 1 MiB).
	MaxPageBytesDefault = 8 << 20
	// MaxLabelValuesDefault is enough for the queues and kinds of most
	// applications while keeping /metrics to a few thousand series.
	MaxLabelValuesDefault = 100
	// LabelTTLDefault lets the series of a kind or queue that went away
	// disappear within the hour.
	LabelTTLDefault = time.Hour
)

// Client is what the server calls of a *drover.Client, whatever its
// transaction type: the interface the server and the CLI share
// (internal/clientapi).
type Client = clientapi.Client

// Config configures a Server.
type Config struct {
	// Client inserts and inspects jobs, and its Remote claims them for
	// remote workers. It works no queue itself; started, it runs the
	// store's maintenance (lease rescue, pruning).
	Client Client
	// Shards is the store's health when it is a fleet of databases
	// (droverfleet.Driver), for GET /v1/shards, the shards page and the
	// shard metrics; nil for a lone store.
	Shards droverfleet.HealthReporter
	// Tokens that may call the API. With none, only /healthz answers.
	Tokens []Token
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// MaxBatch bounds the jobs of one enqueue, and the results or attempts
	// of one finish or heartbeat.
	MaxBatch int
	// MaxWait caps how long a claim may long-poll.
	MaxWait time.Duration
	// SampleInterval is how often the queue figures (depth, oldest job)
	// are read from the store for metrics and the dashboard. The read
	// scans the waiting jobs, so it runs on this interval whatever the
	// number of scrapes and viewers.
	SampleInterval time.Duration
	// PublisherStallAfter is how long a transaction that published topic
	// messages may stay open before the Topics page names it (default
	// drover.PublisherStallAfter); the metric
	// drover_topic_open_publisher_age_seconds reports the age whatever it is.
	PublisherStallAfter time.Duration
	// PoolStats reads the store's connection pool for metrics; optional.
	PoolStats func() storeurl.PoolStats
	// ShardURLs are a fleet's database URLs in shard order, for the
	// shards' addresses on GET /v1/shards and the dashboard, shown
	// without their passwords (and their errors without any of the
	// URLs' secrets); optional.
	ShardURLs []string
	// SecureCookies marks the dashboard's session cookie Secure even when
	// this server sees plain HTTP: set it when a proxy in front terminates
	// TLS, so that the browser never sends the cookie over plain HTTP. The
	// cookie is Secure anyway when the server itself serves TLS. A flag
	// rather than a trusted X-Forwarded-Proto header, since any client can
	// send that header and only the operator knows whether a proxy is in
	// front.
	SecureCookies bool
	// SessionTTL is how long a dashboard login lasts.
	SessionTTL time.Duration
	// MaxPageBytes bounds the JSON of every answer that lists jobs or
	// results, whatever its limit: a page of GET /v1/jobs or of a batch's
	// results ends early, with a cursor to the rest; a claim takes fewer
	// jobs (claimbudget.go); a workflow's graph leaves out the results
	// past it. One job or result always goes in, however large.
	MaxPageBytes int
	// MaxReceiveBytes bounds the payload and metadata bytes of one topic
	// receive (drover.ReceiveParams.MaxBytes, default
	// drover.ReceiveMaxBytesDefault): each batch holds at least one
	// message, and lanes past the budget wait for the next receive.
	MaxReceiveBytes int64
	// MaxLabelValues bounds the distinct values of each metrics label
	// (queue, kind, and queue-kind pairs at five times as many); the rest
	// are counted under "other".
	MaxLabelValues int
	// LabelTTL is how long a label value stays unseen before its series
	// are deleted and its place freed for another value.
	LabelTTL time.Duration
	// Timeouts of the HTTP server (HTTPServer); see the defaults.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConnections caps the connections served at once (Listener).
	MaxConnections int
	// TracerProvider turns tracing on: an enqueue's W3C traceparent
	// header becomes the jobs' trace context, and each attempt an HTTP
	// worker reports gets a span from claim to result, linked to the span
	// that enqueued the job. Give the Client the same provider. Nil: off.
	TracerProvider trace.TracerProvider
}

// Server serves the API. Run its background loops with Run.
type Server struct {
	cfg    Config
	remote *drover.Remote
	// store is the client's store: readiness, outages, notifications,
	// the poll interval and the bulk task records (drover.Store).
	store    *drover.Store
	auth     atomic.Pointer[authenticator]
	sessions *sessions
	waiter   *waiter
	inflight *inflight
	metrics  *metrics
	history  *history
	// topicSamples are the last two subscription lag samples, for the
	// topics page (topicspage.go).
	topicSamples *topicSamples
	// routeSample is the last reading of the unroutable jobs (routing.go).
	routeSample *routeSample
	pages       *pages
	mux         *http.ServeMux
	running     atomic.Bool
	// stopping is closed by Drain: long polls answer at once with an
	// empty job list, and new claims claim nothing.
	stopping chan struct{}
	drain    sync.Once
	// pagePatterns are the dashboard's patterns, whose unauthenticated
	// visitors are sent to the login form.
	pagePatterns map[string]bool
	// bulk runs the bulk actions in the background (bulk.go).
	bulkTasks *bulkTasks
	// claimSizes sizes the chunks of claims (claimbudget.go).
	claimSizes *claimSizes
	// workerSample is the last reading of the worker registry, with the
	// jobs each worker holds: the one source of every table of workers
	// the dashboard shows (routing.go).
	workerSample *workerSample
	// names are the queues and kinds the job filters suggest (names.go).
	names *names
	// fleet is the store when it is a fleet of databases, nil for a lone
	// one; shardSample its last probe (shards.go).
	fleet       droverfleet.HealthReporter
	shardSample *shardSample
}

// New returns a server on cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("server: Client is required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, MaxBodyBytesDefault)
	cfg.MaxBatch = cmp.Or(cfg.MaxBatch, MaxBatchDefault)
	cfg.MaxWait = cmp.Or(cfg.MaxWait, MaxWaitDefault)
	cfg.SampleInterval = cmp.Or(cfg.SampleInterval, SampleIntervalDefault)
	cfg.PublisherStallAfter = cmp.Or(cfg.PublisherStallAfter, drover.PublisherStallAfter)
	cfg.SessionTTL = cmp.Or(cfg.SessionTTL, SessionTTLDefault)
	cfg.MaxPageBytes = cmp.Or(cfg.MaxPageBytes, MaxPageBytesDefault)
	cfg.MaxReceiveBytes = cmp.Or(cfg.MaxReceiveBytes, drover.ReceiveMaxBytesDefault)
	cfg.MaxLabelValues = cmp.Or(cfg.MaxLabelValues, MaxLabelValuesDefault)
	cfg.LabelTTL = cmp.Or(cfg.LabelTTL, LabelTTLDefault)
	cfg.ReadHeaderTimeout = cmp.Or(cfg.ReadHeaderTimeout, ReadHeaderTimeoutDefault)
	cfg.ReadTimeout = cmp.Or(cfg.ReadTimeout, ReadTimeoutDefault)
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, WriteTimeoutDefault)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, IdleTimeoutDefault)
	cfg.MaxConnections = cmp.Or(cfg.MaxConnections, MaxConnectionsDefault)
	if cfg.MaxBodyBytes < 1024 {
		return nil, fmt.Errorf("server: max body %d bytes is too small (minimum 1024)", cfg.MaxBodyBytes)
	}
	if cfg.MaxBatch < 1 || cfg.MaxBatch > drover.MaxAttemptsPerCall {
		return nil, fmt.Errorf("server: max batch %d must be between 1 and %d", cfg.MaxBatch, drover.MaxAttemptsPerCall)
	}
	if cfg.MaxConnections < 1 {
		return nil, fmt.Errorf("server: max connections %d must be at least 1", cfg.MaxConnections)
	}
	for _, tok := range cfg.Tokens {
		// Restrict refuses these; a Token built by hand could still carry
		// both, and the admin routes do not check queues.
		if tok.Queues != nil && slices.Contains(tok.Scopes, ScopeAdmin) {
			return nil, fmt.Errorf("server: token %q: an admin token cannot be restricted to queues", tok.Name)
		}
	}
	s := &Server{cfg: cfg, remote: cfg.Client.Remote(), store: cfg.Client.Store(), stopping: make(chan struct{}), sessions: newSessions(cfg.SessionTTL), waiter: newWaiter(), inflight: newInflight(),
		metrics: newMetrics(cfg.Client, cfg.PoolStats, cfg.MaxLabelValues, cfg.LabelTTL, cfg.Shards != nil), history: &history{}, topicSamples: &topicSamples{}, routeSample: &routeSample{}, workerSample: &workerSample{}, names: &names{}, pages: newPages(),
		mux: http.NewServeMux(), pagePatterns: map[string]bool{}, bulkTasks: newBulkTasks(cfg.Client.Store().BulkTasks(), cfg.Logger), claimSizes: newClaimSizes()}
	if cfg.Shards != nil {
		s.fleet, s.shardSample = cfg.Shards, &shardSample{}
		s.metrics.reg.MustRegister(droverprom.NewShardCollector(cfg.Shards))
	}
	s.auth.Store(newAuthenticator(cfg.Tokens))
	s.routes()
	return s, nil
}

// Run keeps the server's background loops going until ctx ends: the
// notification listener that ends long polls as soon as jobs arrive, and
// the sampler of queue figures.
func (s *Server) Run(ctx context.Context) {
	s.running.Store(true)
	defer s.running.Store(false)
	defer s.bulkTasks.stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.store.Listen(ctx, s.waiter.wake, s.waiter.wakeAll)
	}()
	s.sample(ctx)
	t := time.NewTicker(s.cfg.SampleInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sample(ctx)
		}
	}
}

// Drain tells the server that it is shutting down: open long-polling
// claims answer at once with an empty job list instead of holding their
// connections until their wait ends, and claims that arrive later claim
// nothing, so that no job is handed to a connection about to close. Other
// requests are served as usual. The *http.Server of HTTPServer calls it
// when its Shutdown begins; calling it more than once is harmless.
func (s *Server) Drain() {
	s.drain.Do(func() { close(s.stopping) })
}

// SetTokens replaces the tokens that may call the API, as a reload of the
// tokens file does: requests after it see only the new set, and dashboard
// sessions of tokens no longer in it end at once rather than at their
// expiry.
func (s *Server) SetTokens(tokens []Token) {
	a := newAuthenticator(tokens)
	s.auth.Store(a)
	s.sessions.retain(func(h [sha256.Size]byte) bool { _, ok := a.byHash[h]; return ok })
}

// authenticate returns the request's token, or an error saying what is
// wrong with its credentials. The session cookie counts only where
// allowCookie says so (the dashboard's own routes, which check the
// Origin of every post): a browser attaches cookies to requests that
// other sites make it send, so the JSON API, which cannot tell such a
// request from a program's, takes only the Authorization header, which
// no other site can make a browser set.
func (s *Server) authenticate(r *http.Request, allowCookie bool) (*Token, error) {
	a := s.auth.Load()
	secret, ok, err := bearer(r)
	switch {
	case err != nil:
		return nil, err
	case ok:
		return a.lookup(secret)
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || !allowCookie {
		return nil, fmt.Errorf("missing bearer token: send \"Authorization: Bearer <token>\"")
	}
	h, ok := s.sessions.lookup(c.Value, time.Now())
	if !ok {
		return nil, fmt.Errorf("session expired or ended: log in again")
	}
	tok, ok := a.byHash[h]
	if !ok {
		s.sessions.end(c.Value)
		return nil, fmt.Errorf("session ended: its token was revoked; log in again")
	}
	return tok, nil
}

// sample reads the queue figures once, and what finished since the
// previous sample. A failure only logs: the figures go stale, and /readyz
// reports the store.
func (s *Server) sample(ctx context.Context) {
	now := time.Now()
	s.inflight.sweep(now)
	stats, err := s.cfg.Client.QueueStats(ctx)
	if err == nil {
		s.metrics.observeSample(stats, s.shardQueues(), now)
		// The window of finished jobs ends a little in the past: a job's
		// finalized_at is taken inside its finishing transaction, which
		// becomes visible only at commit, so a window ending now would
		// miss (for good) jobs whose transactions commit after this read.
		until := now.Add(-finishedSettle)
		since := until.Add(-s.cfg.SampleInterval)
		if prev, ok := s.history.latest(); ok {
			since = prev.Until
		}
		p := Point{At: now, Until: until, Seconds: until.Sub(since).Seconds(), Queues: stats}
		if p.Finished, err = s.cfg.Client.FinishedStats(ctx, since, until); err == nil {
			s.history.add(p)
		}
	}
	if err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("sampling queue figures failed", "error", err)
	}
	if _, err := s.sampleTopics(ctx, now); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("sampling subscription lag failed", "error", err)
	}
	if err := s.sampleRouting(ctx, now); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("sampling unroutable jobs failed", "error", err)
	}
	if err := s.sampleWorkers(ctx, now); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("sampling the worker registry failed", "error", err)
	}
	if err := s.sampleShards(ctx, now); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("probing the shards failed", "error", err)
	}
}

// route is one endpoint: who may call it and what handles it. A nil
// scope means no token is needed.
type route struct {
	scopes  []Scope // any of them suffices
	handler func(w http.ResponseWriter, r *http.Request) error
}

func (s *Server) routes() {
	reader := []Scope{ScopeEnqueue, ScopeAdmin}
	work := []Scope{ScopeWork}
	admin := []Scope{ScopeAdmin}
	for pattern, rt := range map[string]route{
		"GET /healthz":                  {nil, s.healthz},
		"GET /readyz":                   {nil, s.readyz},
		"GET /openapi.json":             {nil, s.openapi},
		"POST /v1/jobs":                 {[]Scope{ScopeEnqueue}, s.enqueue},
		"GET /v1/jobs":                  {reader, s.listJobs},
		"GET /v1/jobs/{id}":             {reader, s.getJob},
		"GET /v1/jobs/{id}/result":      {reader, s.jobResult},
		"POST /v1/batches":              {[]Scope{ScopeEnqueue}, s.insertBatch},
		"POST /v1/workflows":            {[]Scope{ScopeEnqueue}, s.insertWorkflow},
		"GET /v1/batches":               {reader, s.listBatches},
		"GET /v1/batches/{id}":          {reader, s.getBatch},
		"GET /v1/jobs/{id}/workflow":    {reader, s.jobWorkflow},
		"GET /v1/batches/{id}/results":  {reader, s.batchResults},
		"POST /v1/jobs/{id}/cancel":     {admin, s.cancelJob},
		"POST /v1/jobs/{id}/retry":      {admin, s.retryJob},
		"POST /v1/jobs/{id}/discard":    {admin, s.discardJob},
		"POST /v1/bulk":                 {admin, s.startBulk},
		"POST /v1/bulk-selection":       {admin, s.startBulkSelection},
		"GET /v1/bulk/{id}":             {admin, s.getBulk},
		"POST /v1/claim":                {work, s.claim},
		"POST /v1/finish":               {work, s.finish},
		"POST /v1/heartbeat":            {work, s.heartbeat},
		"POST /v1/release":              {work, s.release},
		"GET /v1/stats":                 {admin, s.stats},
		"GET /v1/queues":                {admin, s.listQueues},
		"GET /v1/queues/{name}":         {admin, s.getQueue},
		"POST /v1/queues/{name}/pause":  {admin, s.pauseQueue},
		"POST /v1/queues/{name}/resume": {admin, s.resumeQueue},
		// routing: the worker registry, unroutable jobs, strict order
		// (routing.go).
		"POST /v1/queues/{name}/strict": {admin, s.strictQueue},
		"GET /v1/workers":               {reader, s.listWorkers},
		"GET /v1/unroutable":            {reader, s.listUnroutable},
		// a fleet's shards and their health (shards.go).
		"GET /v1/shards": {admin, s.listShards},
		// order: periodic (cron) jobs (periodic.go).
		"GET /v1/periodic":                 {reader, s.listPeriodic},
		"POST /v1/periodic":                {admin, s.createPeriodic},
		"GET /v1/periodic/{name}":          {reader, s.getPeriodic},
		"PUT /v1/periodic/{name}":          {admin, s.updatePeriodic},
		"DELETE /v1/periodic/{name}":       {admin, s.deletePeriodic},
		"POST /v1/periodic/{name}/pause":   {admin, s.pausePeriodic},
		"POST /v1/periodic/{name}/resume":  {admin, s.resumePeriodic},
		"POST /v1/periodic/{name}/trigger": {admin, s.triggerPeriodic},
		"GET /metrics":                     {admin, s.serveMetrics},
		// Topics (topics.go).
		"GET /v1/topics":                                                    {reader, s.listTopics},
		"POST /v1/topics":                                                   {admin, s.createTopic},
		"GET /v1/topics/{topic}":                                            {reader, s.getTopic},
		"DELETE /v1/topics/{topic}":                                         {admin, s.deleteTopic},
		"POST /v1/topics/{topic}/publish":                                   {[]Scope{ScopeEnqueue}, s.publish},
		"POST /v1/messages":                                                 {[]Scope{ScopeEnqueue}, s.publishMany},
		"GET /v1/topics/{topic}/lag":                                        {reader, s.topicLag},
		"GET /v1/topics/{topic}/messages":                                   {reader, s.peekTopic},
		"POST /v1/topics/{topic}/subscriptions":                             {admin, s.createSubscription},
		"DELETE /v1/topics/{topic}/subscriptions/{name}":                    {admin, s.deleteSubscription},
		"POST /v1/topics/{topic}/subscriptions/{name}/receive":              {work, s.receive},
		"POST /v1/topics/{topic}/subscriptions/{name}/ack":                  {work, s.ack},
		"POST /v1/topics/{topic}/subscriptions/{name}/nack":                 {work, s.nack},
		"POST /v1/topics/{topic}/subscriptions/{name}/extend":               {work, s.extendBatches},
		"POST /v1/topics/{topic}/subscriptions/{name}/release":              {work, s.releaseBatches},
		"GET /v1/topics/{topic}/subscriptions/{name}/lanes":                 {reader, s.lanes},
		"POST /v1/topics/{topic}/subscriptions/{name}/lanes/{lane}/release": {admin, s.releaseLane},
		"POST /v1/topics/{topic}/subscriptions/{name}/rewind":               {admin, s.rewindSubscription},
	} {
		s.mux.Handle(pattern, s.endpoint(pattern, rt))
	}
	for pattern, h := range s.htmlRoutes() {
		s.mux.Handle(pattern, s.htmlEndpoint(h))
		s.pagePatterns[pattern] = true
	}
	s.mux.Handle("GET /login", s.htmlPublic(s.loginPage))
	s.mux.Handle("POST /login", s.htmlPublic(s.login))
	s.mux.Handle("POST /logout", s.htmlPublic(s.logout))
	s.mux.Handle("GET /ui/static/", s.static())
}

// public are the patterns that answer without a token: the liveness and
// readiness checks (load balancers probe them), the API's description
// (code generators fetch it), and what a browser needs to log in to the
// dashboard (the login form and its stylesheet), none of which shows any
// job, batch or figure of the store.
var public = map[string]bool{
	"GET /healthz": true, "GET /readyz": true, "GET /openapi.json": true,
	"GET /login": true, "POST /login": true, "POST /logout": true, "GET /ui/static/": true,
}

// htmlPublic serves a page that needs no token.
func (s *Server) htmlPublic(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			status, msg := s.classify(w, r, err)
			writeError(w, status, msg)
		}
	})
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

// serveHTTP authenticates first, so that without a token nothing but
// /healthz reveals even which paths exist, then routes. The mux's own
// answers for unknown paths and methods are plain text; they are turned
// into JSON errors here.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// No response is to be read as anything but its declared type: a
	// JSON error echoing input must never be sniffed into HTML.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	rec := &statusWriter{ResponseWriter: w}
	h, pattern := s.mux.Handler(r)
	var tokName string
	defer func() {
		s.cfg.Logger.Debug("http request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
			"token", tokName, "took", time.Since(start))
	}()
	if pattern == "" && browsing(r) {
		s.browserNotFound(rec, r)
		return
	}
	if !public[pattern] {
		tok, err := s.authenticate(r, s.pagePatterns[pattern])
		if err != nil && s.pagePatterns[pattern] && r.Method == http.MethodGet && r.Header.Get("Authorization") == "" &&
			!strings.HasSuffix(pattern, ".json") {
			// A person opening the dashboard: show the login form.
			http.Redirect(rec, r, "/login", http.StatusSeeOther)
			return
		}
		if err != nil {
			rec.Header().Set("WWW-Authenticate", `Bearer realm="drover"`)
			writeError(rec, http.StatusUnauthorized, err.Error())
			return
		}
		tokName = tok.Name
		r = r.WithContext(context.WithValue(r.Context(), tokenKey{}, tok))
	}
	if pattern == "" {
		// Not found, or the path exists with other methods: the mux
		// knows which and sets Allow; let it decide the status, then
		// answer in JSON.
		probe := &statusWriter{ResponseWriter: discardWriter{header: http.Header{}}}
		h.ServeHTTP(probe, r)
		if allow := probe.Header().Get("Allow"); allow != "" {
			rec.Header().Set("Allow", allow)
			writeError(rec, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow))
			return
		}
		writeError(rec, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s %s (see /openapi.json)", r.Method, r.URL.Path))
		return
	}
	// Through the mux again rather than h, so that it sets the path
	// values of the pattern on r.
	s.mux.ServeHTTP(rec, r)
}

type tokenKey struct{}

// browsing reports whether r is a person's browser opening a page, rather
// than a program calling the API: a GET for HTML, without a bearer token,
// outside /v1.
func browsing(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.Header.Get("Authorization") == "" &&
		!strings.HasPrefix(r.URL.Path, "/v1/") && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// browserNotFound answers a browser at a path that is no page. A path that
// is a dashboard page without its /ui prefix (/jobs, /jobs/7) redirects
// there; anything else gets the dashboard's own 404 page, or the login
// form first, so that without a session nothing says which paths exist.
func (s *Server) browserNotFound(w http.ResponseWriter, r *http.Request) {
	alt := r.Clone(r.Context())
	alt.URL.Path, alt.URL.RawPath = "/ui"+r.URL.Path, ""
	if _, pattern := s.mux.Handler(alt); s.pagePatterns[pattern] {
		http.Redirect(w, r, alt.URL.RequestURI(), http.StatusSeeOther)
		return
	}
	if _, err := s.authenticate(r, true); err != nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	_ = render(w, http.StatusNotFound, s.pages.errorPage, page{Title: "Not found",
		Message: fmt.Sprintf("No page at %s. The dashboard's pages start at / and /ui/jobs.", r.URL.Path)})
}

// endpoint wraps a handler with its scope check, the body limit and the
// mapping of errors to statuses.
func (s *Server) endpoint(pattern string, rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.scopes != nil {
			tok := r.Context().Value(tokenKey{}).(*Token)
			allowed := false
			for _, sc := range rt.scopes {
				allowed = allowed || tok.Allows(sc)
			}
			if !allowed {
				writeError(w, http.StatusForbidden, fmt.Sprintf("token %q lacks the scope for %s (needs one of: %s)",
					tok.Name, pattern, joinScopes(rt.scopes)))
				return
			}
		}
		// A body must say it is JSON: a browser sends text/plain,
		// form encodings or no type at all across sites without asking
		// first (no CORS preflight), so refusing them closes that door
		// even to a request that somehow carries credentials.
		if r.ContentLength != 0 && !isJSON(r.Header.Get("Content-Type")) {
			writeError(w, http.StatusUnsupportedMediaType,
				fmt.Sprintf("content type %q: send application/json", r.Header.Get("Content-Type")))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		if err := rt.handler(w, r); err != nil {
			status, msg := s.classify(w, r, err)
			writeError(w, status, msg)
		}
	})
}

func joinScopes(scopes []Scope) string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// apiError is an error with the status it deserves.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, a...)}
}

// classify maps an error to a status and a message for the caller. Store
// failures are logged in full and answered with a generic message, so
// that connection details never reach a client.
func (s *Server) classify(w http.ResponseWriter, r *http.Request, err error) (int, string) {
	var ae *apiError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.msg
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over the limit of %d bytes", mbe.Limit)
	case errors.Is(err, drover.ErrInvalid):
		return http.StatusBadRequest, strings.Replace(err.Error(), drover.ErrInvalid.Error()+": ", "", 1)
	case errors.Is(err, drover.ErrNotFound), errors.Is(err, drover.ErrPeriodicNotFound), errors.Is(err, drover.ErrTopicNotFound),
		errors.Is(err, drover.ErrSubscriptionNotFound):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, drover.ErrPeriodicExists), errors.Is(err, drover.ErrPeriodicConfigured):
		return http.StatusConflict, err.Error()
	case errors.Is(err, droverdriver.ErrTopicsUnsupported), errors.Is(err, droverdriver.ErrPeriodicUnsupported):
		return http.StatusNotImplemented, err.Error()
	case errors.Is(err, drover.ErrUniqueConflict), errors.Is(err, drover.ErrNotRetryable):
		return http.StatusConflict, err.Error()
	case errors.Is(err, drover.ErrSchemaMissing):
		return http.StatusServiceUnavailable, err.Error()
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away; nobody reads this answer.
		return 499, "client closed the request"
	case r.Context().Err() == nil && s.storeUnavailable(err):
		s.cfg.Logger.Warn("store unavailable", "method", r.Method, "path", r.URL.Path, "error", err)
		w.Header().Set("Retry-After", "1")
		return http.StatusServiceUnavailable, "the store is unavailable; retry shortly"
	}
	s.cfg.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	return http.StatusInternalServerError, "internal error: the store failed; see the server log"
}

// statusWriter remembers the status written, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection, for the
// deadlines of long polls.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// discardWriter lets the mux's fallback handler run without answering.
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}
