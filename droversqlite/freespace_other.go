//go:build !(linux || darwin || freebsd)

package droversqlite

// freeBytes cannot read free space here; the write probe then relies on
// its rolled-back write alone.
func freeBytes(string) (uint64, bool, error) { return 0, false, nil }
