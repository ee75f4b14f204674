// Package report writes the results of a `drover bench` run: a JSON file
// that later runs and tools can compare against, a terminal table, a
// Markdown section for docs/benchmarks.md and an SVG chart.
//
// Every output is rendered from the same Report value so that the figures in
// the docs, the chart and the JSON file can never disagree.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/app/bench/stats"
)

// System is the value of Report.System for Drover's own runs; the field
// exists so that reports of other queues measured with the same scenarios
// can sit beside Drover's.
const System = "drover"

// The drivers a report can name in Report.Driver.
const (
	DriverPostgres = "postgres"
	DriverSQLite   = "sqlite"
)

// Report is the machine-readable result of one bench scenario. Its JSON keys
// are a published format: docs and comparison tools read them, so renaming
// one is a breaking change.
type Report struct {
	Scenario string `json:"scenario"`
	// System is the queue under test, System for Drover.
	System string `json:"system"`
	// Driver is DriverPostgres or DriverSQLite.
	Driver string `json:"driver"`
	// Settings describes the knobs of the run (batch size, workers, …) in
	// free text, as printed by the bench command.
	Settings string `json:"settings"`
	// Command is the exact command line that reproduces the run.
	Command   string    `json:"command"`
	Commit    string    `json:"commit"`
	Machine   string    `json:"machine"`
	StartedAt time.Time `json:"started_at"`

	Jobs       int64   `json:"jobs"`
	Seconds    float64 `json:"seconds"`
	JobsPerSec float64 `json:"jobs_per_sec"`
	// SteadyJobsPerSec is the rate after warm-up, see stats.SteadyState.
	SteadyJobsPerSec float64 `json:"steady_jobs_per_sec"`
	// SteadyNote explains how the steady-state rate was derived.
	SteadyNote   string  `json:"steady_note"`
	InsertPerSec float64 `json:"insert_per_sec"`
	// Cost is what a job cost the store and the client, per resource.
	Cost

	// LatencyMs is the end-to-end latency of jobs, insert to completion.
	LatencyMs stats.Percentiles `json:"latency_ms"`
	// StartLatencyMs is the time from insert to the handler starting.
	StartLatencyMs stats.Percentiles `json:"start_latency_ms"`
	// WarmupStartLatencyMs is StartLatencyMs of the jobs started during
	// the warm-up (--warmup), which StartLatencyMs leaves out; nil
	// without one.
	WarmupStartLatencyMs *stats.Percentiles `json:"warmup_start_latency_ms,omitempty"`
	// Lost counts jobs inserted but never completed; Duplicates counts
	// extra executions of a job. Both must be 0 for a valid run.
	Lost       int64 `json:"lost"`
	Duplicates int64 `json:"duplicates"`

	Windows []stats.Window `json:"windows"`
	// Points holds one entry per process or stream count of a scaling
	// scenario.
	Points []Point `json:"points,omitempty"`
	// DB holds database-side figures (transactions, WAL bytes, dead
	// tuples, …) whose set depends on the driver.
	DB map[string]any `json:"db,omitempty"`
	// Floor is the rate of the bare SQL a queue cannot beat, measured in
	// the same run.
	Floor *Reference `json:"floor,omitempty"`
	// CompleteFloor is the floor's loop marking rows completed instead of
	// deleting them: the floor of a queue that keeps its jobs' history,
	// which Drover's store cost per job is held to (PostgreSQL only).
	CompleteFloor *Reference `json:"complete_floor,omitempty"`
	// Ceiling is the rate of Drover's own claim and finish statements
	// with no handlers, measured in the same run: what the store allows
	// Drover's schema before any job runs.
	Ceiling *Reference `json:"ceiling,omitempty"`
	// GoInProcess is, for a burndown whose workers go through drover
	// serve's API (--via), the same backlog worked by a Go client in the
	// bench process in the same run; Via is how the run's workers did
	// against it.
	GoInProcess *Reference `json:"go_in_process,omitempty"`
	Via         *Via       `json:"via,omitempty"`
	// Health samples the hot table during a long run (--health-every), to
	// show whether its size and dead tuples stay flat.
	Health []HealthSample `json:"health,omitempty"`
	// Chaos holds what a fault-injection run measured; its keys sit at the
	// top level of the JSON report.
	*Chaos
	Notes []string `json:"notes,omitempty"`
}

// Chaos is the outcome of a run with an injected fault. Rates are steady
// rates of the windows before the fault, while it lasted, and after it.
type Chaos struct {
	Fault            string  `json:"fault"`
	FaultAtSec       float64 `json:"fault_at_sec"`
	FaultSeconds     float64 `json:"fault_seconds"`
	JobsPerSecBefore float64 `json:"jobs_per_sec_before"`
	JobsPerSecDuring float64 `json:"jobs_per_sec_during"`
	JobsPerSecAfter  float64 `json:"jobs_per_sec_after"`
	// RecoverySeconds is the time from the fault's start until a window
	// reached 90% of the rate before it; -1 if none did.
	RecoverySeconds float64 `json:"recovery_seconds"`
	// FailoverSeconds is, for the failover fault, the time from the kill
	// of the primary until the multi-host URL took a write on the new one.
	FailoverSeconds float64 `json:"failover_seconds,omitempty"`
	// UnexplainedDuplicates counts extra runs of jobs whose errors show no
	// expired lease: runs that should never have happened.
	UnexplainedDuplicates int64 `json:"unexplained_duplicates"`
	// Errors are the errors users saw (worker logs aside), with counts.
	Errors map[string]int `json:"errors"`
}

// HealthSample is the hot table's physical state at one moment of a run.
// DeadPercent and FreePercent come from pgstattuple and are -1 where it is
// not available.
type HealthSample struct {
	AtSec           float64 `json:"at_sec"`
	LiveTuples      int64   `json:"live_tuples"`
	DeadTuples      int64   `json:"dead_tuples"`
	TableBytes      int64   `json:"table_bytes"`
	IndexBytes      int64   `json:"index_bytes"`
	FinishedBytes   int64   `json:"finished_bytes"`
	DeadPercent     float64 `json:"dead_percent"`
	FreePercent     float64 `json:"free_percent"`
	AutovacuumCount int64   `json:"autovacuum_count"`
}

// Reference is a throughput the run is compared against, measured with
// its own command, so that a reader can reproduce it as well.
type Reference struct {
	Name       string  `json:"name"`
	JobsPerSec float64 `json:"jobs_per_sec"`
	Command    string  `json:"command"`
	Cost
}

// Via is what workers behind drover serve's API did, per worker process.
type Via struct {
	// Workers is the --via value: http, python or typescript.
	Workers string `json:"workers"`
	// Processes counts the worker processes (1 for http: the bench's).
	Processes            int     `json:"processes"`
	JobsPerSecPerProcess float64 `json:"jobs_per_sec_per_process"`
	// WorkerCPUUsPerJob is the worker processes' own CPU per job, without
	// the bench process's (which serves the API); nil for http.
	WorkerCPUUsPerJob *float64 `json:"worker_cpu_us_per_job,omitempty"`
	// GoRatio is the run's rate over GoInProcess's.
	GoRatio float64 `json:"go_ratio"`
}

// viaRows are the rows every output shows for workers behind the API:
// their rate per worker process, against the Go client's, and their own
// CPU per job.
func (r *Report) viaRows() [][2]string {
	v := r.Via
	if v == nil {
		return nil
	}
	rows := [][2]string{{"jobs/s per worker process (--via " + v.Workers + ")",
		fmt.Sprintf("%s (%d process(es); %s× the Go client in-process)", formatRate(v.JobsPerSecPerProcess), v.Processes, formatFloat(v.GoRatio, 2))}}
	if v.WorkerCPUUsPerJob != nil {
		rows = append(rows, [2]string{"worker processes' CPU µs/job", formatFloat(*v.WorkerCPUUsPerJob, 2)})
	}
	return rows
}

// Cost is what one job cost, per resource, over a measured interval. A
// figure the store cannot give is nil and left out of the JSON: SQLite's
// CPU is inside the client's, a PostgreSQL server on another machine has
// no /proc here, and only PostgreSQL has a WAL position to read.
type Cost struct {
	// StoreCPUUsPerJob is the CPU of the database server's whole process
	// tree, in µs per job.
	StoreCPUUsPerJob *float64 `json:"store_cpu_us_per_job,omitempty"`
	// ClientCPUUsPerJob is the CPU of the bench process and every worker
	// process it started, in µs per job (on SQLite the store's included).
	ClientCPUUsPerJob *float64 `json:"client_cpu_us_per_job,omitempty"`
	// WALBytesPerJob is the WAL written per job (PostgreSQL LSN deltas).
	WALBytesPerJob *float64 `json:"wal_bytes_per_job,omitempty"`
}

// Measured reports whether any figure was measured.
func (c Cost) Measured() bool {
	return c.StoreCPUUsPerJob != nil || c.ClientCPUUsPerJob != nil || c.WALBytesPerJob != nil
}

// Point is the result of a scaling scenario at one degree of parallelism:
// either Processes or Streams is set, the other left 0.
type Point struct {
	Processes int `json:"processes,omitempty"`
	Streams   int `json:"streams,omitempty"`
	// Instances is the number of workflows of a dag point.
	Instances        int               `json:"instances,omitempty"`
	Jobs             int64             `json:"jobs"`
	Seconds          float64           `json:"seconds"`
	JobsPerSec       float64           `json:"jobs_per_sec"`
	SteadyJobsPerSec float64           `json:"steady_jobs_per_sec"`
	Factor           float64           `json:"factor"`
	Efficiency       float64           `json:"efficiency"`
	LatencyMs        stats.Percentiles `json:"latency_ms"`
	StartLatencyMs   stats.Percentiles `json:"start_latency_ms"`
	Lost             int64             `json:"lost"`
	Duplicates       int64             `json:"duplicates"`
	// Rounds holds the steady rate of every round of a sweep run with
	// --rounds, in the order they ran. The point's other figures are those
	// of the median round (the lower of the middle two for an even count),
	// except Lost and Duplicates, which count every round.
	Rounds []float64 `json:"rounds,omitempty"`
	// FloorJobsPerSec is the raw SQL floor measured with as many clients
	// as the point has worker processes, in the same run (scale with
	// --floor, PostgreSQL). A curve that falls where the floor's own curve
	// falls shows the database giving way on its CPUs, not Drover.
	FloorJobsPerSec float64 `json:"floor_jobs_per_sec,omitempty"`
	Cost
}

// K returns the point's degree of parallelism, Processes if set, otherwise
// Streams.
func (p Point) K() int {
	if p.Processes != 0 {
		return p.Processes
	}
	if p.Streams != 0 {
		return p.Streams
	}
	return p.Instances
}

// MedianRound returns the round of rounds (points of one K) with the median
// steady rate, the lower of the middle two for an even count, with every
// round's steady rate in Rounds and the losses and duplicates of all rounds,
// and that round's index in rounds. Taking a measured round rather than
// averaging keeps the point's figures (latencies, jobs, seconds) those of
// one real run.
func MedianRound(rounds []Point) (Point, int) {
	order := make([]int, len(rounds))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(rounds[a].SteadyJobsPerSec, rounds[b].SteadyJobsPerSec)
	})
	at := order[(len(order)-1)/2]
	median := rounds[at]
	median.Rounds, median.Lost, median.Duplicates = nil, 0, 0
	for _, r := range rounds {
		median.Rounds = append(median.Rounds, r.SteadyJobsPerSec)
		median.Lost += r.Lost
		median.Duplicates += r.Duplicates
	}
	return median, at
}

// hasRounds reports whether any point was measured in more than one round,
// which adds a column to the tables.
func hasRounds(points []Point) bool {
	return slices.ContainsFunc(points, func(p Point) bool { return len(p.Rounds) > 1 })
}

// New returns a report for scenario on driver with the fields that describe
// the environment already filled in: System, Commit, Machine and StartedAt
// (now, in UTC, so that reports from different machines sort together).
func New(scenario, driver string) *Report {
	return &Report{
		Scenario:  scenario,
		System:    System,
		Driver:    driver,
		Commit:    Commit(),
		Machine:   Machine(),
		StartedAt: time.Now().UTC(),
	}
}

// ApplyScaling fills in Factor and Efficiency of every point with
// stats.Scaling. It uses the steady-state rates when every point has one,
// because warm-up weighs more on short high-K runs and would understate
// their scaling; otherwise it uses the whole-run rates for all points, so
// that the factors never mix the two.
func (r *Report) ApplyScaling() {
	useSteady := useSteadyRates(r.Points)
	in := make([]stats.Point, 0, len(r.Points))
	for _, p := range r.Points {
		rate := p.JobsPerSec
		if useSteady {
			rate = p.SteadyJobsPerSec
		}
		in = append(in, stats.Point{K: p.K(), JobsPerSec: rate})
	}
	scaled := stats.Scaling(in)
	// Scaling sorts and drops K < 1, so match results back by K; equal K
	// values are matched in order, as Scaling's sort is stable.
	used := make([]bool, len(scaled))
	for i := range r.Points {
		r.Points[i].Factor, r.Points[i].Efficiency = 0, 0
		for j, s := range scaled {
			if !used[j] && s.K == r.Points[i].K() {
				used[j] = true
				r.Points[i].Factor, r.Points[i].Efficiency = s.Factor, s.Efficiency
				break
			}
		}
	}
}

// useSteadyRates reports whether every point has a steady-state rate, in
// which case charts and scaling factors use those instead of whole-run rates.
func useSteadyRates(points []Point) bool {
	if len(points) == 0 {
		return false
	}
	for _, p := range points {
		if p.SteadyJobsPerSec <= 0 {
			return false
		}
	}
	return true
}

// SteadyNote returns stats.SteadyRule followed by what the rule decided for
// ws, so that a reader of the report can tell how much of the run the steady
// rate covers without recomputing it.
func SteadyNote(ws []stats.Window) string {
	if len(ws) == 0 {
		return stats.SteadyRule + " No windows were recorded."
	}
	first, end, _ := stats.SteadyRange(ws)
	var secs float64
	for _, w := range ws[first:end] {
		secs += w.Seconds
	}
	if first == 0 && end == len(ws) {
		note := fmt.Sprintf("%s This run: all %d window(s) (%s s) count, so the steady rate equals the whole-run rate",
			stats.SteadyRule, len(ws), formatFloat(secs, 1))
		if len(ws) < 3 {
			note += " (too few windows to detect warm-up)"
		}
		return note + "."
	}
	note := fmt.Sprintf("%s This run: windows %d–%d of %d (%s s) are steady", stats.SteadyRule, first+1, end, len(ws), formatFloat(secs, 1))
	if first > 0 {
		note += fmt.Sprintf("; %d warm-up window(s) excluded", first)
	}
	if end < len(ws) {
		note += "; the final partial window excluded"
	}
	return note + "."
}

// WriteJSON writes r as indented JSON to path, creating its directory if
// needed so that a bench run never loses its results to a missing folder.
func WriteJSON(path string, r *Report) error { return writeJSONFile(path, r) }

// writeJSONFile writes v as indented JSON to path, creating its directory.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("report: encode %s: %w", path, err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// namedReference is a Reference with what it is, for output.
type namedReference struct {
	kind string
	*Reference
}

// references lists the run's references, ceiling first, as every output
// shows them.
func (r *Report) references() []namedReference {
	var out []namedReference
	if r.Ceiling != nil {
		out = append(out, namedReference{"ceiling", r.Ceiling})
	}
	if r.Floor != nil {
		out = append(out, namedReference{"floor", r.Floor})
	}
	if r.CompleteFloor != nil {
		out = append(out, namedReference{"complete floor", r.CompleteFloor})
	}
	if r.GoInProcess != nil {
		out = append(out, namedReference{"Go in-process", r.GoInProcess})
	}
	return out
}
