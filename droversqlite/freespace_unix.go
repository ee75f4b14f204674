//go:build linux || darwin || freebsd

package droversqlite

import "syscall"

// freeBytes returns the space an unprivileged process may still write on
// the file system holding dir.
func freeBytes(dir string) (uint64, bool, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true, nil //nolint:unconvert // the field types differ by OS
}
