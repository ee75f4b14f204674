package droversqlite

import (
	"testing"
)

func TestPragmasTmp(t *testing.T) {
	d := setup(t)
	for _, p := range []string{"secure_delete", "cell_size_check", "temp_store", "cache_size", "mmap_size", "page_size", "journal_mode", "synchronous", "wal_autocheckpoint", "foreign_keys", "locking_mode"} {
		var v string
		d.writer.QueryRow("PRAGMA " + p).Scan(&v)
		t.Logf("%s = %s", p, v)
	}
	rows, _ := d.writer.Query("PRAGMA compile_options")
	for rows.Next() {
		var s string
		rows.Scan(&s)
		t.Log(s)
	}
	rows.Close()
}
