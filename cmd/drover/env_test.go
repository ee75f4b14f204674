package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagsFromEnvironment: every flag can come from DROVER_<FLAG>, a flag
// on the command line wins, and a bad value names its variable.
func TestFlagsFromEnvironment(t *testing.T) {
	f := setupSQLite(t).migrated(t)
	env := map[string]string{
		"DROVER_DATABASE_URL": f.url,
		"DROVER_SCHEMA":       f.schema,
		"DROVER_QUEUE":        "reports",
		"DROVER_PRIORITY":     "3",
		"DROVER_TAGS":         "a,b",
	}
	id := f.enqueue(t, "k", `{}`)[0]
	r := runCLI(t, env, "enqueue", "k", `{}`)
	if r.code != exitOK {
		t.Fatalf("enqueue with the store from the environment:\n%s", r)
	}
	j := f.getJob(t, id+1)
	if j.Queue != "reports" || j.Priority != 3 || strings.Join(j.Tags, ",") != "a,b" {
		t.Fatalf("job from DROVER_QUEUE, DROVER_PRIORITY, DROVER_TAGS = queue %q priority %d tags %v", j.Queue, j.Priority, j.Tags)
	}
	if r := runCLI(t, env, "enqueue", "k", `{}`, "--queue", "flags-win"); r.code != exitOK || f.getJob(t, id+2).Queue != "flags-win" {
		t.Fatalf("--queue did not win over DROVER_QUEUE:\n%s", r)
	}
	// DROVER_DATABASE_URL wins over DATABASE_URL, and a flag over both.
	env[envDatabaseURL] = "sqlite:///nonexistent/dir/x.db"
	if r := runCLI(t, env, "jobs", "list", "--json"); r.code != exitOK || !strings.Contains(r.stdout, `"queue": "reports"`) {
		t.Fatalf("DROVER_DATABASE_URL did not win over DATABASE_URL:\n%s", r)
	}
	if r := runCLI(t, map[string]string{"DROVER_DATABASE_URL": "sqlite:///nonexistent/dir/x.db"}, "--database-url", f.url,
		"--schema", f.schema, "jobs", "list"); r.code != exitOK {
		t.Fatalf("--database-url did not win over DROVER_DATABASE_URL:\n%s", r)
	}

	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"parse error", map[string]string{"DROVER_PRIORITY": "abc"}, []string{"enqueue", "k", `{}`},
			`drover: DROVER_PRIORITY="abc": invalid value for --priority: strconv.ParseInt: parsing "abc": invalid syntax`},
		{"bool", map[string]string{"DROVER_JSON": "maybe"}, []string{"jobs", "list"},
			`drover: DROVER_JSON="maybe": invalid value for --json: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{"checked value", map[string]string{"DROVER_MAX_ATTEMPTS": "0"}, []string{"enqueue", "k", `{}`},
			"drover: --max-attempts 0: must be at least 1 (set by $DROVER_MAX_ATTEMPTS)"},
		{"global flag", map[string]string{"DROVER_LOG_LEVEL": "loud"}, []string{"jobs", "list"},
			`drover: DROVER_LOG_LEVEL "loud": use debug, info, warn or error`},
		{"schema", map[string]string{"DROVER_SCHEMA": "Bad-Schema"}, []string{"jobs", "list"},
			`drover: DROVER_SCHEMA: schema "Bad-Schema" is invalid: use 1-48 lowercase letters, digits and underscores, not starting with a digit`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.env["DROVER_DATABASE_URL"] = f.url
			checkFailure(t, runCLI(t, tt.env, tt.args...), exitUsage, tt.want)
		})
	}
}

// TestEveryFlagHasAnEnvironmentVariable walks the command tree: every
// flag of every command is set by its variable, and every help says so.
func TestEveryFlagHasAnEnvironmentVariable(t *testing.T) {
	c := &cli{getenv: func(string) string { return "" }}
	root := c.newRootCommand()
	var walk func(cmd *cobra.Command)
	n := 0
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		cmd.Flags().AddFlagSet(cmd.InheritedFlags())
		seen := map[string]bool{}
		for _, f := range []string{"database-url", "log-level"} {
			seen[f] = cmd.Flags().Lookup(f) != nil
		}
		if !seen["database-url"] || !seen["log-level"] {
			t.Errorf("%s lacks the global flags", cmd.CommandPath())
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Value.Type() != "string" {
				return
			}
			name := envName(f.Name)
			c.getenv = func(k string) string {
				if k == name {
					return "from-env"
				}
				return ""
			}
			f.Changed = false
			if err := c.applyEnv(cmd); err != nil {
				t.Errorf("%s: %v", cmd.CommandPath(), err)
			}
			if f.Value.String() != "from-env" || c.fromEnv[f.Name] != name {
				t.Errorf("%s --%s: %s did not set it", cmd.CommandPath(), f.Name, name)
			}
			f.Changed = true // keep later variables of this walk off it
			n++
		})
		if !strings.Contains(cmd.UsageString(), "DROVER_<FLAG>") {
			t.Errorf("%s --help does not mention DROVER_<FLAG>", cmd.CommandPath())
		}
	}
	walk(root)
	if n < 20 {
		t.Fatalf("only %d string flags checked", n)
	}
}
