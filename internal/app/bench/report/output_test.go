package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/app/bench/stats"
)

func TestWriteTable(t *testing.T) {
	tests := []struct {
		name    string
		r       *Report
		want    []string
		notWant []string
	}{
		{
			name: "single run",
			r:    sampleReport(false),
			want: []string{
				"scenario", "throughput",
				"postgres",
				"drover bench throughput --driver postgres --jobs 100000",
				"100,000",                  // jobs
				"8,000",                    // jobs/s
				"8,512",                    // steady jobs/s
				"45,000",                   // insert/s
				"1.25 / 4.50 / 9.75 / 120", // latency
				"ceiling (own statements) jobs/s", "9,500",
				"floor (bare SKIP LOCKED) jobs/s", "11,000",
				"db wal_bytes", "950,000,000", "db xact_commit", "123,456",
				"start s", "70,000", // window table and a backlog
				"Steady state:",
				"note: first note",
			},
			notWant: []string{"efficiency"},
		},
		{
			name: "scaling points",
			r:    sampleReport(true),
			want: []string{
				"processes", "factor", "efficiency",
				"16,320", // steady jobs/s at K=4
				"3.20",   // factor at K=4: 16320/5100
				"0.80",   // efficiency at K=4
				"11.0",   // p99 at K=4
			},
			notWant: []string{"each round"},
		},
		{
			name: "scaling points measured in rounds",
			r:    withRounds(sampleReport(true)),
			want: []string{"steady jobs/s of each round", "5,000 · 5,100 · 5,300"},
		},
		{
			name: "scaling points with the floor's curve",
			r:    withFloorCurve(sampleReport(true)),
			want: []string{"floor jobs/s (k clients)", "× floor",
				"20,400", "0.80", // K = 4: 16,320 against 20,400
				"-", // K = 2 has no floor figure
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			WriteTable(&b, tt.r)
			out := b.String()
			for _, s := range tt.want {
				if !strings.Contains(out, s) {
					t.Errorf("table lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(out, s) {
					t.Errorf("table unexpectedly contains %q:\n%s", s, out)
				}
			}
		})
	}
}

// withFloorCurve gives r's points at K = 1 and 4 the raw SQL floor with
// as many clients, leaving K = 2 without one.
func withFloorCurve(r *Report) *Report {
	r.Points[0].FloorJobsPerSec = 10_200
	r.Points[2].FloorJobsPerSec = 20_400
	return r
}

// withRounds gives r's first point three rounds, as --rounds 3 would.
func withRounds(r *Report) *Report {
	r.Points[0].Rounds = []float64{5000, 5100, 5300}
	return r
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name string
		r    *Report
		want []string
	}{
		{
			name: "single run",
			r:    sampleReport(false),
			want: []string{
				"### throughput — 2026-03-04\n",
				"- Machine: linux/amd64, 2 CPUs (Test CPU), 24 GiB RAM, go1.26.8\n",
				"- Commit: `abc1234`\n",
				"```sh\ndrover bench throughput --driver postgres --jobs 100000\n```\n",
				"| Figure | Value |\n|---|---:|\n",
				"| Jobs | 100,000 |\n",
				"| Throughput, whole run | 8,000 jobs/s |\n",
				"| Throughput, steady state | 8,512 jobs/s |\n",
				"| Latency p50 / p95 / p99 / max | 1.25 / 4.50 / 9.75 / 120 ms |\n",
				"| Lost / duplicates | 0 / 0 |\n",
				"| Ceiling: own statements | 9,500 jobs/s (`drover statements, no handlers`) |\n",
				"| Floor: bare SKIP LOCKED | 11,000 jobs/s (`drover bench floor --driver postgres`) |\n",
				"| Database: xact_commit | 123,456 |\n",
				"\nSteady state: the reference rate",
				"- second note\n",
			},
		},
		{
			name: "scaling points",
			r:    sampleReport(true),
			want: []string{
				"| Processes | Jobs | Seconds | Jobs/s | Steady jobs/s | Factor | Efficiency |",
				"| 1 | 50,000 | 10.00 | 5,000 | 5,100 | 1.00 | 1.00 |",
				"| 4 | 50,000 | 3.20 | 15,625 | 16,320 | 3.20 | 0.80 | 2.00 | 11.0 |",
			},
		},
		{
			name: "scaling points measured in rounds",
			r:    withRounds(sampleReport(true)),
			want: []string{
				"| Lost | Duplicates | Steady jobs/s of each round |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
				"| 0 | 0 | 5,000 · 5,100 · 5,300 |\n",
			},
		},
		{
			name: "scaling points with the floor's curve",
			r:    withFloorCurve(sampleReport(true)),
			want: []string{
				"| Lost | Duplicates | Floor jobs/s (K clients) | × floor |\n",
				"| 0 | 0 | 10,200 | 0.50 |\n",
				"| 0 | 0 | - | - |\n",
			},
		},
		{
			name: "hostile free text",
			r: &Report{
				Scenario: "odd\nname",
				Command:  "echo ```x``` | wc",
				DB:       map[string]any{"a|b": "c|d"},
			},
			want: []string{
				"### odd name — undated\n",
				"````sh\necho ```x``` | wc\n````\n",
				`| Database: a\|b | c\|d |`,
				"- Commit: `unknown`",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := Markdown(tt.r)
			for _, s := range tt.want {
				if !strings.Contains(md, s) {
					t.Errorf("markdown lacks %q:\n%s", s, md)
				}
			}
		})
	}
}

// svgSummary parses an SVG document with encoding/xml and counts what the
// tests care about.
type svgSummary struct {
	root      string
	viewBox   string
	polylines map[string]int // by data-series
	texts     []string
}

func parseSVG(t *testing.T, b []byte) svgSummary {
	t.Helper()
	s := svgSummary{polylines: map[string]int{}}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var inText bool
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, b)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if s.root == "" {
				s.root = el.Name.Space + " " + el.Name.Local
				for _, a := range el.Attr {
					if a.Name.Local == "viewBox" {
						s.viewBox = a.Value
					}
				}
			}
			switch el.Name.Local {
			case "polyline":
				for _, a := range el.Attr {
					if a.Name.Local == "data-series" {
						s.polylines[a.Value]++
					}
				}
			case "text":
				inText = true
				text.Reset()
			}
		case xml.CharData:
			if inText {
				text.Write(el)
			}
		case xml.EndElement:
			if el.Name.Local == "text" {
				inText = false
				s.texts = append(s.texts, text.String())
			}
		}
	}
	return s
}

func TestSVG(t *testing.T) {
	manyK := &Report{Scenario: "scale", System: System, Driver: DriverSQLite}
	for _, k := range []int{1, 2, 4, 8, 16, 32, 64} {
		manyK.Points = append(manyK.Points, Point{Streams: k, JobsPerSec: float64(100 * k)})
	}
	manyK.ApplyScaling()

	tests := []struct {
		name       string
		r          *Report
		wantSeries []string
		wantTexts  []string
	}{
		{
			name:       "scaling chart",
			r:          sampleReport(true),
			wantSeries: []string{"steady jobs/s", "efficiency"},
			wantTexts: []string{
				"throughput: steady jobs/s by processes", "processes",
				"efficiency (factor / K)", "1.2", "steady jobs/s (left axis)", "efficiency (right axis)",
				"ceiling: own statements",
				"floor: bare SKIP LOCKED",
			},
		},
		{
			name:       "scaling chart with the floor's curve",
			r:          withFloorCurve(sampleReport(true)),
			wantSeries: []string{"steady jobs/s", "efficiency", "SQL floor, K clients"},
			wantTexts:  []string{"SQL floor, K clients (left axis)"},
		},
		{
			name:       "wide K range uses a log axis",
			r:          manyK,
			wantSeries: []string{"jobs/s", "efficiency"},
			wantTexts:  []string{"streams (log scale)", "64"},
		},
		{
			name:       "time chart from windows",
			r:          sampleReport(false),
			wantSeries: []string{"jobs/s", "p99 ms"},
			wantTexts: []string{
				"throughput: throughput and p99 latency over time", "time since start (s)",
				"p99 latency (ms)", "warm-up ends", "steady 8,512 jobs/s", "10k",
			},
		},
		{
			name:      "no data",
			r:         &Report{Scenario: "empty"},
			wantTexts: []string{"no windows recorded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parseSVG(t, SVG(tt.r))
			if s.root != "http://www.w3.org/2000/svg svg" {
				t.Errorf("root element = %q, want svg in the SVG namespace", s.root)
			}
			if s.viewBox == "" {
				t.Error("svg has no viewBox")
			}
			if len(s.polylines) != len(tt.wantSeries) {
				t.Errorf("series = %v, want %v", s.polylines, tt.wantSeries)
			}
			for _, name := range tt.wantSeries {
				if s.polylines[name] != 1 {
					t.Errorf("series %q drawn %d times, want once", name, s.polylines[name])
				}
			}
			all := strings.Join(s.texts, "\n")
			for _, want := range tt.wantTexts {
				if !strings.Contains(all, want) {
					t.Errorf("no text %q in:\n%s", want, all)
				}
			}
		})
	}
}

func TestWriteSVG(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		path    string
		wantErr string
	}{
		{path: filepath.Join(dir, "charts", "run.svg")},
		{path: filepath.Join(dir, "RUN.SVG")},
		{path: filepath.Join(dir, "run.png"), wantErr: "only SVG is supported"},
		{path: filepath.Join(dir, "run.jpg"), wantErr: "only SVG is supported"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			err := WriteSVG(tt.path, sampleReport(false))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("WriteSVG(%q) error = %v, want %q", tt.path, err, tt.wantErr)
				}
				if _, statErr := os.Stat(tt.path); statErr == nil {
					t.Errorf("WriteSVG(%q) wrote a file despite the error", tt.path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			parseSVG(t, b)
		})
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		max      float64
		n        int
		wantTop  float64
		wantStep float64
	}{
		{0, 5, 1, 0.2},
		{1, 5, 1, 0.2},
		{8512, 5, 10000, 2000},
		{950, 5, 1000, 200},
		{60, 8, 60, 10},
		{17.5, 8, 17.5, 2.5},
		{12.3, 5, 12.5, 2.5},
		{16, 8, 16, 2},
		{0.042, 5, 0.05, 0.01},
	}
	for _, tt := range tests {
		ticks, top, step := niceTicks(tt.max, tt.n)
		if !approxEqual(top, tt.wantTop) || !approxEqual(step, tt.wantStep) {
			t.Errorf("niceTicks(%v, %d) top %v step %v, want %v and %v", tt.max, tt.n, top, step, tt.wantTop, tt.wantStep)
		}
		if ticks[0] != 0 || !approxEqual(ticks[len(ticks)-1], top) || top < tt.max {
			t.Errorf("niceTicks(%v, %d) ticks %v do not span 0..%v", tt.max, tt.n, ticks, top)
		}
	}
}

func TestTickLabel(t *testing.T) {
	tests := []struct {
		v, step float64
		want    string
	}{
		{0, 2000, "0"},
		{10000, 2000, "10k"},
		{7500, 2500, "7.5k"},
		{0.30000000000000004, 0.1, "0.3"},
		{5, 2.5, "5"},
		{2500, 500, "2500"},
		{0.6, 0.2, "0.6"},
		{0.05, 0.01, "0.05"},
		{40, 10, "40"},
	}
	for _, tt := range tests {
		if got := tickLabel(tt.v, tt.step); got != tt.want {
			t.Errorf("tickLabel(%v, %v) = %q, want %q", tt.v, tt.step, got, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{formatInt(0), "0"},
		{formatInt(999), "999"},
		{formatInt(1000), "1,000"},
		{formatInt(-1234567), "-1,234,567"},
		{formatFloat(1234567.891, 2), "1,234,567.89"},
		{formatFloat(-1234.5, 1), "-1,234.5"},
		{formatRate(8512.4), "8,512"},
		{formatRate(45.25), "45.2"},
		{formatRate(4.567), "4.57"},
		{formatMs(0), "0"},
		{formatMs(0.4567), "0.457"},
		{formatMs(9.75), "9.75"},
		{formatMs(11), "11.0"},
		{formatMs(1234.4), "1,234"},
		{formatAny(9.5e8), "950,000,000"},
		{formatAny(0.25), "0.25"},
		{formatAny("text"), "text"},
		{formatAny(int64(12345)), "12,345"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestMachineParts(t *testing.T) {
	const cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC   7B13 64-Core Processor\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n"
	const meminfo = "MemTotal:       24634756 kB\nMemFree:        1000 kB\n"
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"cpu model", cpuModel(strings.NewReader(cpuinfo)), "AMD EPYC 7B13 64-Core Processor"},
		{"no cpu model", cpuModel(strings.NewReader("processor : 0\n")), ""},
		{"memory", formatGiB(memTotal(strings.NewReader(meminfo))), "23"},
		{"small memory", formatGiB(2 << 30), "2"},
		{
			"full line",
			describeMachine("linux", "amd64", 2, "AMD EPYC 7B13", 24<<30, "go1.26.8"),
			"linux/amd64, 2 CPUs (AMD EPYC 7B13), 24 GiB RAM, go1.26.8",
		},
		{
			"unknown parts left out",
			describeMachine("darwin", "arm64", 1, "", 0, "go1.26.8"),
			"darwin/arm64, 1 CPU, go1.26.8",
		},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	if m := memTotal(strings.NewReader("MemFree: 1 kB\n")); m != 0 {
		t.Errorf("memTotal without MemTotal = %d, want 0", m)
	}
}

func TestMachineAndCommit(t *testing.T) {
	if m := Machine(); !strings.Contains(m, "/") || !strings.Contains(m, "go") {
		t.Errorf("Machine() = %q, want at least os/arch and the Go version", m)
	}
	if c := Commit(); c == "" {
		t.Error("Commit() is empty, want a revision or \"unknown\"")
	}
}

// The Markdown and table outputs must agree with the stats package on what
// a steady note says, since the docs quote it.
func TestSteadyNoteQuotedInOutputs(t *testing.T) {
	r := sampleReport(false)
	if !strings.Contains(Markdown(r), stats.SteadyRule) {
		t.Error("markdown does not quote the steady-state rule")
	}
	var b bytes.Buffer
	WriteTable(&b, r)
	if !strings.Contains(b.String(), stats.SteadyRule) {
		t.Error("table does not quote the steady-state rule")
	}
}
