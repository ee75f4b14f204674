package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/app/bench"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/clientapi"
)

// Exit codes. Scripts tell a mistake in the command line (2), which retrying
// cannot fix, from a failure of the store or the job (1), which it may.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Every flag can also be set in the environment as envPrefix followed by
// its name in upper case with underscores (--log-level: DROVER_LOG_LEVEL),
// so that a shell or a container can configure every command once. A flag
// on the command line wins. DATABASE_URL, the name every other tool reads,
// is honoured after DROVER_DATABASE_URL.
const (
	envPrefix      = "DROVER_"
	envDatabaseURL = "DATABASE_URL"
	defaultSchema  = "drover"
	// envDatabaseURLs names the shards of a fleet, separated by
	// whitespace (a PostgreSQL multi-host URL holds commas).
	envDatabaseURLs = "DROVER_DATABASE_URLS"
)

// urlList is --database-url: given once, a store; repeated, the shards
// of a fleet in order.
type urlList []string

func (l *urlList) String() string     { return strings.Join(*l, " ") }
func (l *urlList) Type() string       { return "url" }
func (l *urlList) Set(v string) error { *l = append(*l, v); return nil }

// envHelp is the note every command's help ends with.
const envHelp = `
Every flag can also be set in the environment as DROVER_<FLAG>, upper case with
underscores (--log-level debug: DROVER_LOG_LEVEL=debug; --database-url also from
DATABASE_URL); a flag on the command line wins.
`

// envName is the environment variable that sets flag.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// needsStore annotates commands that talk to a store. Their URL and schema
// are validated before they run, so a typo is reported as a usage error
// rather than as whatever the store makes of it.
const needsStore = "drover/needs-store"

// usageError marks an error as the caller's mistake (exit code 2), as
// opposed to a failure while doing what was asked (exit code 1).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...)}
}

// cli is one run of the command tree: the global flags, what the running
// command resolved from them, and where output goes. Keeping it in a value
// rather than in package variables lets tests run many commands in one
// process.
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string

	// Global flags as parsed: --database-url once per shard of a fleet.
	flagURL      urlList
	flagSchema   string
	flagLogLevel string
	// flagLogFormat is "text" or "json" once prepare has checked it.
	flagLogFormat string

	// running is set once cobra has parsed the command line and handed
	// control to a command, so that errors before that point, which are
	// all about the command line, exit with the usage code.
	running bool

	// fromEnv maps the name of each flag that prepare set from the
	// environment to the variable it came from, so that errors about its
	// value can say where the value was.
	fromEnv map[string]string

	// Resolved by prepare from the flags and the environment.
	rawURL    string
	rawURLs   []string
	urlSource string
	schema    string
	// schemaFlag is set when --schema was given on the command line, as
	// opposed to the environment, whose DROVER_SCHEMA names the
	// application's schema: the bench works in its own unless told.
	schemaFlag bool
	target     storeurl.Target
	logger     *slog.Logger

	// workerCmd is `drover worker`, whose default log level is info
	// because its log is its only output.
	workerCmd *cobra.Command
}

// run executes the command line args and returns the process exit code. It
// is main without the process: tests call it with their own writers and
// environment.
func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	// The first interrupt cancels the context so that a worker stops
	// gracefully and a long command returns; unregistering then lets a
	// second interrupt kill the process the usual way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	return execute(ctx, args, stdout, stderr, getenv)
}

// execute is run under a context of the caller's, which tests use to
// bound every command they run.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	c := &cli{
		stdout: stdout,
		stderr: stderr,
		getenv: getenv,
		logger: newLogger(stderr, slog.LevelWarn, "text"),
	}
	root := c.newRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	return c.fail(ctx, cmd, err)
}

func (c *cli) newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "drover",
		Short: "Run and inspect a Drover job queue",
		Long: `drover runs and inspects a Drover job queue on PostgreSQL or an embedded SQLite file.

The store comes from --database-url, $DROVER_DATABASE_URL or $DATABASE_URL:
postgres://user:password@host:5432/db for PostgreSQL, sqlite:///path/to/file.db for
SQLite. With none, the embedded store ./drover.db is created and migrated on first use.`,
		// Errors are printed by run, as one line; the full usage is only
		// for --help.
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })
	root.SetUsageTemplate(root.UsageTemplate() + envHelp)

	pf := root.PersistentFlags()
	pf.Var(&c.flagURL, "database-url",
		"store to use: postgres://… or sqlite:///path; repeated, the PostgreSQL shards of a fleet in order (default $DROVER_DATABASE_URL, $DROVER_DATABASE_URLS (whitespace-separated) or $DATABASE_URL, else the embedded store ./drover.db)")
	pf.StringVar(&c.flagSchema, "schema", "",
		`PostgreSQL schema or SQLite table prefix of Drover's tables (default "drover")`)
	pf.StringVar(&c.flagLogLevel, "log-level", "",
		"log level on stderr: debug, info, warn or error (default warn; info for worker)")
	pf.StringVar(&c.flagLogFormat, "log-format", "text",
		"log format on stderr: text (key=value) or json (one JSON object a line, the final error too)")

	benchCmd := bench.NewCommand(c.benchEnv)
	c.workerCmd = bench.NewWorkerCommand(c.benchEnv)
	markNeedsStore(benchCmd)
	markNeedsStore(c.workerCmd)

	root.AddCommand(
		c.migrateCommand(),
		c.enqueueCommand(),
		c.jobsCommand(),
		c.queuesCommand(),
		c.workersCommand(),
		c.shardsCommand(),
		c.batchCommand(),
		c.periodicCommand(),
		c.topicsCommand(),
		c.serveCommand(),
		c.versionCommand(),
		benchCmd,
		c.workerCmd,
	)
	c.instrument(root)
	return root
}

// markNeedsStore annotates cmd and its subcommands as talking to a store.
func markNeedsStore(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[needsStore] = "true"
	for _, sub := range cmd.Commands() {
		markNeedsStore(sub)
	}
}

// instrument wraps the run function of every command in the tree so that
// it records that parsing is over and resolves the global flags first. It
// wraps rather than using PersistentPreRunE because cobra runs only the
// nearest persistent hook, and the bench commands, written elsewhere, may
// bring their own.
//
// Groups of subcommands below the root get a run function too: cobra
// would otherwise answer a mistyped subcommand ("drover jobs lst") with the
// help text and exit code 0, which hides the mistake from scripts.
func (c *cli) instrument(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		c.instrument(sub)
	}
	runE, runFn := cmd.RunE, cmd.Run
	if runE == nil && runFn == nil {
		if !cmd.HasParent() || !cmd.HasSubCommands() {
			return
		}
		runE = groupRun
		if cmd.Args == nil {
			cmd.Args = cobra.ArbitraryArgs
		}
	}
	cmd.Run = nil
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c.running = true
		if err := c.prepare(cmd); err != nil {
			return err
		}
		if runE != nil {
			return runE(cmd, args)
		}
		runFn(cmd, args)
		return nil
	}
}

// groupRun runs a group of subcommands given no subcommand: it shows the
// group's help, or rejects what is not one of its subcommands.
func groupRun(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		// cobra applies this default only on the root's own lookup.
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	}
	return usagef("%s", msg)
}

// prepare resolves the global flags for cmd: flags win over the
// environment, and both are checked before anything connects.
func (c *cli) prepare(cmd *cobra.Command) error {
	if err := c.applyEnv(cmd); err != nil {
		return err
	}
	level, err := c.logLevel(cmd)
	if err != nil {
		return err
	}
	switch c.flagLogFormat {
	case "text", "json":
	default:
		return usagef("%s %q: use text or json", c.flagSource("log-format"), c.flagLogFormat)
	}
	c.logger = newLogger(c.stderr, level, c.flagLogFormat)

	c.rawURLs, c.urlSource = c.flagURL, c.flagSource("database-url")
	if !cmd.Flags().Changed("database-url") {
		if v := strings.Fields(c.getenv(envDatabaseURLs)); len(v) > 0 {
			c.rawURLs, c.urlSource = v, envDatabaseURLs
		} else if v := c.getenv(envDatabaseURL); v != "" {
			c.rawURLs, c.urlSource = []string{v}, envDatabaseURL
		}
	}
	c.rawURL = ""
	if len(c.rawURLs) > 0 {
		c.rawURL = c.rawURLs[0]
	}
	schemaSource := c.flagSource("schema")
	c.schemaFlag = cmd.Flags().Changed("schema") && c.fromEnv["schema"] == ""
	c.schema = c.flagSchema
	if c.schema == "" && !cmd.Flags().Changed("schema") {
		c.schema = defaultSchema
	}

	if cmd.Annotations[needsStore] == "" {
		return nil
	}
	if err := droverdriver.ValidateSchema(c.schema); err != nil {
		return usagef("%s: %v", schemaSource, err)
	}
	t, err := storeurl.ParseAll(c.rawURLs, c.urlSource)
	if err != nil {
		return &usageError{err: err}
	}
	c.target = t
	return nil
}

// applyEnv sets every flag of cmd (its own and those it inherits) that
// the command line left alone from its DROVER_ variable, if that is set
// and not empty. The flag then counts as given, so that code asking
// whether the user chose a value sees the environment's choice too.
func (c *cli) applyEnv(cmd *cobra.Command) error {
	c.fromEnv = map[string]string{}
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		name := envName(f.Name)
		v := c.getenv(name)
		if v == "" {
			return
		}
		if serr := f.Value.Set(v); serr != nil {
			err = usagef("%s=%q: invalid value for --%s: %v", name, c.redact(v), f.Name, serr)
			return
		}
		f.Changed = true
		c.fromEnv[f.Name] = name
	})
	return err
}

// flagSource names where a flag's value came from, for messages: the flag
// or the variable that set it.
func (c *cli) flagSource(flag string) string {
	if env, ok := c.fromEnv[flag]; ok {
		return env
	}
	return "--" + flag
}

func (c *cli) logLevel(cmd *cobra.Command) (slog.Level, error) {
	switch strings.ToLower(c.flagLogLevel) {
	case "":
		if cmd == c.workerCmd {
			return slog.LevelInfo, nil
		}
		return slog.LevelWarn, nil
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, usagef("%s %q: use debug, info, warn or error", c.flagSource("log-level"), c.flagLogLevel)
}

// newLogger returns the logger of format "text" or "json". Both put each
// record on one line: the text handler quotes a value that holds a line
// break, and JSON escapes it.
func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// benchEnv hands the resolved global flags to `drover bench` and `drover
// worker`. It is called when they run, after prepare.
func (c *cli) benchEnv() bench.Env {
	return bench.Env{
		DatabaseURL: c.rawURL,
		DatabaseURLs: func() []string {
			if len(c.rawURLs) > 1 {
				return c.rawURLs
			}
			return nil
		}(),
		Schema:    c.schema,
		SchemaSet: c.schemaFlag,
		Logger:    c.logger,
		Stdout:    c.stdout,
		Stderr:    c.stderr,
	}
}

// logf prints what opening the store did (creating ./drover.db, migrating
// it) whatever the log level: it is rare, and it tells a user who gave no
// URL where their jobs went.
func (c *cli) logf(format string, args ...any) {
	if c.flagLogFormat == "json" {
		// Progress notes (a migration applied) are info records among the
		// others, however low the level, as the text form always prints
		// them.
		newLogger(c.stderr, slog.LevelInfo, "json").Info(fmt.Sprintf(format, args...))
		return
	}
	fmt.Fprintf(c.stderr, format+"\n", args...)
}

// openStore opens the store the global flags name. Commands that work with
// jobs pass current: on SQLite the schema is then migrated if needed, so
// that the first `drover enqueue` on a machine just works, while on
// PostgreSQL, where migrating is a deliberate step for whoever owns the
// database, a schema that is behind is an error that says what to run.
func (c *cli) openStore(ctx context.Context, current bool) (*storeurl.Store, error) {
	st, err := storeurl.Open(ctx, c.target, storeurl.Options{
		Schema:      c.schema,
		AutoMigrate: current && (c.target.Default || c.target.Kind == storeurl.SQLite),
		Logf:        c.logf,
		Logger:      c.logger,
	})
	if err != nil {
		return nil, err
	}
	if !current {
		return st, nil
	}
	version, latest, err := drover.MigrationStatus(ctx, st.Driver)
	if err != nil {
		st.Close()
		return nil, err
	}
	if err := droverdriver.CheckSchemaVersion(st.Driver.Schema(), version, latest); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// storeClient is what the CLI's commands call of a drover.Client, whatever
// the store's transaction type (storeurl.NewClient).
type storeClient = clientapi.Client

// openClient opens the store, checked to be current, and a client on it
// that only inserts and inspects.
func (c *cli) openClient(ctx context.Context) (storeClient, func(), error) {
	st, err := c.openStore(ctx, true)
	if err != nil {
		return nil, nil, err
	}
	client, err := storeurl.NewClient[storeClient](st, &drover.Config{Logger: c.logger})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return client, st.Close, nil
}

// fail prints err as one line and returns the exit code for it.
func (c *cli) fail(ctx context.Context, cmd *cobra.Command, err error) int {
	var ue *usageError
	usage := !c.running || errors.As(err, &ue) || errors.Is(err, drover.ErrInvalid)
	msg := err.Error()
	if errors.Is(err, drover.ErrInvalid) {
		// The exit code already says the input was at fault; the generic
		// prefix would only push the field name away from the start.
		msg = strings.Replace(msg, drover.ErrInvalid.Error()+": ", "", 1)
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		msg = "interrupted"
	}
	// Commands name the flag whose value is wrong; when the value came
	// from the environment, say so, or the user looks at a command line
	// that does not have it.
	for flag, env := range c.fromEnv {
		if rest, ok := strings.CutPrefix(msg, "--"+flag); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
			msg += fmt.Sprintf(" (set by $%s)", env)
			break
		}
	}
	msg = c.redact(oneLine(msg))
	if c.logFormat(cmd) == "json" {
		// A log collector that reads JSON lines gets the failure as one
		// more record, rather than a line it cannot parse.
		code := exitFailure
		if usage {
			code = exitUsage
		}
		newLogger(c.stderr, slog.LevelError, "json").LogAttrs(ctx, slog.LevelError, msg, slog.Int("exit", code), slog.String("command", cmd.CommandPath()))
		return code
	}
	fmt.Fprintf(c.stderr, "drover: %s\n", msg)
	if usage {
		fmt.Fprintf(c.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	}
	return exitFailure
}

// logFormat is the log format for a failure, which may come before
// prepare applied the environment (cobra checks arguments first).
func (c *cli) logFormat(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("log-format"); f != nil && !f.Changed {
		if v := c.getenv(envName("log-format")); v != "" {
			return v
		}
	}
	return c.flagLogFormat
}

// oneLine folds a multi-line message (cobra's suggestions, errors joined by
// a driver) into one line, so that every failure is a single line of
// stderr that a log collector keeps together.
func oneLine(msg string) string {
	if head, sugg, ok := strings.Cut(msg, "\n\nDid you mean this?\n"); ok {
		msg = fmt.Sprintf("%s (did you mean %s?)", head, strings.Join(strings.Fields(sugg), " or "))
	}
	var parts []string
	for line := range strings.Lines(msg) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// redact removes every secret of the database URL, whether it came from
// the flag or the environment, from msg. storeurl already redacts what it
// reports; this is the last line of defence for messages from elsewhere
// (drivers, cobra) that might quote the URL.
func (c *cli) redact(msg string) string {
	raws := append([]string{c.getenv(envPrefix + "DATABASE_URL"), c.getenv(envDatabaseURL)}, c.flagURL...)
	for _, raw := range append(raws, strings.Fields(c.getenv(envDatabaseURLs))...) {
		msg = storeurl.RedactIn(msg, raw)
	}
	return msg
}

// listenError reports why listening on addr (--listen) failed. An address
// that does not parse is the caller's mistake (exit 2); one the system
// refuses (in use, not this host's, a privileged port) is a failure of
// the moment (exit 1) that waiting or another process's exit may fix, and
// its message is the system's reason without the usage hint.
func listenError(addr string, err error) error {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return fmt.Errorf("cannot listen on %s: %w", addr, se.Err)
	}
	return usagef("--listen %s: %v", addr, err)
}

// argsNamed accepts exactly the named positional arguments and says which
// are missing or how many are extra, as a usage error.
func argsNamed(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			missing := names[len(args):]
			noun := "argument"
			if len(missing) > 1 {
				noun = "arguments"
			}
			return usagef("%s: missing %s %s", cmd.Name(), noun, strings.Join(missing, " and "))
		case len(args) > len(names):
			if len(names) == 0 {
				return usagef("%s: takes no arguments, got %q", cmd.Name(), args)
			}
			return usagef("%s: too many arguments: want %s, got %d", cmd.Name(), strings.Join(names, " "), len(args))
		}
		return nil
	}
}
