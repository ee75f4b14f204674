package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// statLine builds a /proc/<pid>/stat line with the given command name,
// parent and CPU times (ticks); the other fields hold plausible values.
func statLine(comm string, ppid int, utime, stime, cutime, cstime int64) string {
	return "4242 (" + comm + ") S " + strconv.Itoa(ppid) + " 4242 4242 0 -1 4194560 1227 0 0 0 " +
		strconv.FormatInt(utime, 10) + " " + strconv.FormatInt(stime, 10) + " " +
		strconv.FormatInt(cutime, 10) + " " + strconv.FormatInt(cstime, 10) +
		" 20 0 1 0 123456 171237376 4006 18446744073709551615 1 1 0 0 0 0 0 16781312 17922 0 0 0 17 1 0 0 0 0 0\n"
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{"postmaster", statLine("postgres", 1, 120, 30, 4000, 900),
			procStat{comm: "postgres", ppid: 1, utime: 120, stime: 30, cutime: 4000, cstime: 900}, false},
		{"a command name with spaces and parentheses", statLine("a (b) c", 7, 1, 2, 3, 4),
			procStat{comm: "a (b) c", ppid: 7, utime: 1, stime: 2, cutime: 3, cstime: 4}, false},
		{"no parentheses", "4242 postgres S 1 2 3", procStat{}, true},
		{"cut short", "4242 (postgres) S 1 4242 4242 0 -1 4194560 1227 0", procStat{}, true},
		{"a time that is not a number", "4242 (postgres) S 1 4242 4242 0 -1 4194560 1227 0 0 0 x 2 3 4 20 0", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.line))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// fakeProc writes a /proc with one stat file per process.
func fakeProc(t *testing.T, stats map[int]string) string {
	t.Helper()
	dir := t.TempDir()
	for pid, line := range stats {
		d := filepath.Join(dir, strconv.Itoa(pid))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Entries that are not processes are skipped.
	if err := os.WriteFile(filepath.Join(dir, "uptime"), []byte("1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTreeCPU(t *testing.T) {
	tests := []struct {
		name  string
		stats map[int]string
		want  time.Duration
	}{
		{"the root alone, with what its exited children used", map[int]string{
			100: statLine("postgres", 1, 10, 5, 200, 50),
		}, 265 * 10 * time.Millisecond},
		{"live children count their own time, other processes nothing", map[int]string{
			100: statLine("postgres", 1, 10, 5, 200, 50),
			101: statLine("postgres", 100, 30, 10, 7, 7), // a child's reaped children are not the server's
			102: statLine("postgres", 100, 1, 1, 0, 0),
			200: statLine("drover", 1, 999, 999, 0, 0),
			201: statLine("postgres", 200, 999, 999, 0, 0),
		}, (265 + 40 + 2) * 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := treeCPU(fakeProc(t, tt.stats), 100)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("treeCPU = %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("a root that is gone is an error", func(t *testing.T) {
		if _, err := treeCPU(fakeProc(t, nil), 100); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestProcessesCPUAndPostmaster(t *testing.T) {
	proc := fakeProc(t, map[int]string{
		100: statLine("postgres", 1, 0, 0, 0, 0),
		101: statLine("postgres", 100, 0, 0, 0, 0),
		300: statLine("drover", 1, 150, 50, 10, 0),
		301: statLine("drover", 1, 100, 0, 0, 0),
		400: statLine("bash", 1, 0, 0, 0, 0),
		401: statLine("postgres", 400, 0, 0, 0, 0),
	})
	if got, want := processesCPU(proc, []int{300, 301, 999}), 310*10*time.Millisecond; got != want {
		t.Errorf("processesCPU = %s, want %s (a process that is gone counts nothing)", got, want)
	}
	for _, tt := range []struct {
		backend, want int
	}{
		{101, 100}, // a backend of a local server
		{300, 0},   // not a PostgreSQL process: the server is elsewhere
		{401, 0},   // its parent is not the server
		{999, 0},   // not on this machine
	} {
		if got := findPostmaster(proc, tt.backend); got != tt.want {
			t.Errorf("findPostmaster(%d) = %d, want %d", tt.backend, got, tt.want)
		}
	}
}

func TestPerJob(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	n := func(v int64) *int64 { return &v }
	f := func(p *float64) string {
		if p == nil {
			return "nil"
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	tests := []struct {
		name               string
		before, after      costSample
		jobs               int64
		store, client, wal string
	}{
		{"postgres", costSample{client: time.Second, store: d(2 * time.Second), wal: n(1000)},
			costSample{client: 2400 * time.Millisecond, store: d(5 * time.Second), wal: n(200_001_000)}, 200_000,
			"15", "7", "1000"},
		{"sqlite: the client's figure only", costSample{client: 0}, costSample{client: 3 * time.Second}, 200_000,
			"nil", "15", "nil"},
		{"a figure missing from one reading stays nil", costSample{store: d(0), wal: n(0)}, costSample{client: 3 * time.Microsecond}, 2,
			"nil", "1.5", "nil"},
		{"rounded to hundredths", costSample{}, costSample{client: 10 * time.Microsecond}, 3,
			"nil", "3.33", "nil"},
		{"no jobs, no figures", costSample{}, costSample{client: time.Second, store: d(time.Second)}, 0,
			"nil", "nil", "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := perJob(tt.before, tt.after, tt.jobs)
			if got := f(c.StoreCPUUsPerJob); got != tt.store {
				t.Errorf("store = %s, want %s", got, tt.store)
			}
			if got := f(c.ClientCPUUsPerJob); got != tt.client {
				t.Errorf("client = %s, want %s", got, tt.client)
			}
			if got := f(c.WALBytesPerJob); got != tt.wal {
				t.Errorf("wal = %s, want %s", got, tt.wal)
			}
		})
	}
}
