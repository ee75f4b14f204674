package pgcluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Local is this machine's PostgreSQL installation as throwaway servers use
// it: where the server binaries are and, when this process is root, the
// account they run as (initdb and postgres refuse to run as root). Start
// uses one; so does internal/testkit/pgha, whose failover managers run as the same
// account in directories made the same way.
type Local struct {
	binDir string
	owner  *osUser // nil: run as the current user
}

// osUser is the unprivileged account the server runs as when we are root.
type osUser struct {
	name     string
	uid, gid int
	home     string
}

// FindLocal locates the server binaries and the account to run them as.
func FindLocal() (*Local, error) {
	dir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	return &Local{binDir: dir, owner: owner}, nil
}

// Bin returns the path of one of the server's tools (initdb, pg_ctl,
// postgres, …).
func (l *Local) Bin(name string) string { return filepath.Join(l.binDir, name) }

// Command returns a command that runs name as the server's account, in
// dir (the caller's working directory, often below /root, may be closed
// to that account), with untranslated messages so that callers can match
// them. It does not start it.
func (l *Local) Command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LC_MESSAGES=C")
	if l.owner != nil {
		// The process itself becomes the server's account, rather than a
		// child of runuser or su, so that its PID is the tool's own and a
		// chaos test can signal exactly it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
			Uid: uint32(l.owner.uid), Gid: uint32(l.owner.gid), Groups: []uint32{}}}
		cmd.Env = append(cmd.Env, "HOME="+l.owner.home, "USER="+l.owner.name, "LOGNAME="+l.owner.name)
	}
	return cmd
}

// Run runs name to its end (see Command) and returns its combined output
// for error messages.
func (l *Local) Run(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := l.Command(ctx, dir, name, args...)
	// pg_ctl start forks the server, which inherits stdout/stderr; without a
	// WaitDelay, reading a pipe the server keeps open would hang forever.
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.Bytes(), err
}

// MakeDir creates a fresh directory below parent (the system temporary
// directory when empty) that the server's account owns and can reach.
func (l *Local) MakeDir(parent string) (string, error) { return makeBaseDir(parent, l.owner) }

// Mkdir creates the directory path, owned by the server's account and
// closed to others (0700), as PostgreSQL and pg_autoctl want their
// directories.
func (l *Local) Mkdir(path string) error {
	if err := os.Mkdir(path, 0o700); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if l.owner != nil {
		if err := os.Chown(path, l.owner.uid, l.owner.gid); err != nil {
			return fmt.Errorf("pgcluster: chown %s: %w", path, err)
		}
	}
	return nil
}

// WriteFile writes a file the server's account owns, with the 0600
// permissions PostgreSQL expects of the files in its data directory.
func (l *Local) WriteFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("pgcluster: writing %s: %w", path, err)
	}
	if l.owner != nil {
		if err := os.Chown(path, l.owner.uid, l.owner.gid); err != nil {
			return fmt.Errorf("pgcluster: chown %s: %w", path, err)
		}
	}
	return nil
}

// findBinDir locates initdb and pg_ctl on PATH, falling back to the newest
// Debian-style /usr/lib/postgresql/<version>/bin, which is not on PATH by
// default. Links are followed to the installation's own directory, where
// the other tools are (pg_controldata, pg_basebackup, which pg_autoctl
// looks for beside pg_ctl, and links on PATH often leave out).
func findBinDir() (string, error) {
	initdb, err1 := exec.LookPath("initdb")
	pgCtl, err2 := exec.LookPath("pg_ctl")
	if err1 == nil && err2 == nil {
		initdb, err1 = filepath.EvalSymlinks(absPath(initdb))
		pgCtl, err2 = filepath.EvalSymlinks(absPath(pgCtl))
		if err1 == nil && err2 == nil && filepath.Dir(initdb) == filepath.Dir(pgCtl) {
			return filepath.Dir(pgCtl), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		return versionLess(filepath.Base(filepath.Dir(dirs[j])), filepath.Base(filepath.Dir(dirs[i])))
	})
	for _, dir := range dirs {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "pg_ctl")) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("pgcluster: initdb and pg_ctl not found on PATH or in /usr/lib/postgresql/*/bin; %s", installHint)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// versionLess compares dotted version strings numerically, so that "15"
// sorts after "9.6".
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, errX := strconv.Atoi(as[i])
		y, errY := strconv.Atoi(bs[i])
		if errX != nil || errY != nil {
			if as[i] != bs[i] {
				return as[i] < bs[i]
			}
			continue
		}
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// serverUser returns the account to run PostgreSQL as, or nil to run as the
// current user. initdb and postgres refuse to run as root, and machines here
// usually run tests as root, so then we use the "postgres" account that the
// distribution packages create.
func serverUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(superuser)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root, but cannot find the %q OS user to run the server as (%w); %s, or create it with: useradd --system postgres", superuser, err, installHint)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: unexpected uid %q for user %s", u.Uid, superuser)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: unexpected gid %q for user %s", u.Gid, superuser)
	}
	return &osUser{name: u.Username, uid: uid, gid: gid, home: u.HomeDir}, nil
}

// makeBaseDir creates a temporary directory below parent and, when the
// server runs as another user, hands it over to that user and makes sure
// the user can reach it.
func makeBaseDir(parent string, owner *osUser) (string, error) {
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", fmt.Errorf("pgcluster: creating %s: %w", parent, err)
		}
	}
	dir, err := os.MkdirTemp(parent, "drover-pg-")
	if err != nil {
		return "", fmt.Errorf("pgcluster: creating temporary directory: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	if owner == nil {
		return dir, nil
	}
	fail := func(err error) (string, error) {
		_ = os.RemoveAll(dir)
		return "", err
	}
	// MkdirTemp uses 0700, which the postgres user could not enter even
	// after the chown if a parent is closed, so open up the whole chain.
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(fmt.Errorf("pgcluster: chmod %s: %w", dir, err))
	}
	if err := os.Chown(dir, owner.uid, owner.gid); err != nil {
		return fail(fmt.Errorf("pgcluster: chown %s to %s: %w", dir, owner.name, err))
	}
	if err := ensureTraversable(filepath.Dir(dir)); err != nil {
		return fail(err)
	}
	return dir, nil
}

// ensureTraversable makes sure other users can traverse every directory from
// dir up to the root. Directories inside the system temporary directory (for
// example the 0700 ones testing.T.TempDir creates) are opened up with chmod
// 0755 because they are ours and throwaway; anything else is left alone and
// reported, since silently changing permissions there would be a surprise.
func ensureTraversable(dir string) error {
	tmp, err := filepath.Abs(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			rel, err := filepath.Rel(tmp, d)
			inTmp := err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
			if !inTmp {
				return fmt.Errorf("pgcluster: directory %s is not traversable by the postgres user (mode %v); choose another Options.Dir or chmod o+x it", d, fi.Mode().Perm())
			}
			if err := os.Chmod(d, 0o755); err != nil {
				return fmt.Errorf("pgcluster: chmod %s: %w", d, err)
			}
		}
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}

// PostmasterPID reads the PID of the server running on dataDir from its
// postmaster.pid, whose first line it is. A server that is not running
// has no such file.
func PostmasterPID(dataDir string) (int, error) {
	data, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("pgcluster: reading the postmaster's PID: %w", err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0, fmt.Errorf("pgcluster: %s/postmaster.pid starts with %q, not a PID", dataDir, first)
	}
	return pid, nil
}

// FreePort asks the kernel for an unused loopback port. The port is
// released before a server binds it, so there is a small race; callers
// that pick ports this way retry a start that finds the port taken.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgcluster: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
