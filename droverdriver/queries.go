package droverdriver

import (
	"context"
	"fmt"
	"regexp"

	"github.com/droverhq/drover/drovertype"
)

// schemaPattern is what a schema name may look like. Names are validated
// before they reach SQL and then quoted as well, so no user input is ever
// spliced into a statement unchecked.
var schemaPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`)

// ValidateSchema checks a schema name (PostgreSQL) or table prefix (SQLite).
func ValidateSchema(schema string) error {
	if !schemaPattern.MatchString(schema) {
		return fmt.Errorf("schema %q is invalid: use 1-48 lowercase letters, digits and underscores, not starting with a digit", schema)
	}
	return nil
}

// MigrateUpTo applies, in d's migration transaction, the migrations of d
// not applied yet whose version is at most last, in order. It returns the
// schema version it found and the migrations it applied.
func MigrateUpTo(ctx context.Context, d Driver, last int) (found int, applied []drovertype.Migration, err error) {
	err = d.MigrateTx(ctx, func(ctx context.Context, m Migrator) error {
		v, err := m.Version(ctx)
		if err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		found = v
		if latest := LatestVersion(d); v > latest {
			return CheckSchemaVersion(d.Schema(), v, latest)
		}
		for _, mig := range d.Migrations() {
			if mig.Version <= v || mig.Version > last {
				continue
			}
			if err := m.Apply(ctx, mig); err != nil {
				return err
			}
			applied = append(applied, mig)
		}
		return nil
	})
	return found, applied, err
}

// LatestVersion is the highest migration d knows.
func LatestVersion(d Driver) int {
	ms := d.Migrations()
	return ms[len(ms)-1].Version
}

// CheckSchemaVersion says whether a store at version can be worked by a
// binary whose latest migration is latest: nil when they agree, a
// *SchemaVersionError otherwise.
func CheckSchemaVersion(schema string, version, latest int) error {
	if version == latest {
		return nil
	}
	return &SchemaVersionError{Schema: schema, Version: version, Latest: latest}
}

// SchemaVersionError says that a store's schema is behind this binary
// (it wraps ErrSchemaMissing, and its message says to migrate) or ahead of
// it (it wraps ErrSchemaNewer and says to upgrade, since statements written
// for an older schema may misread a newer one).
type SchemaVersionError struct {
	Schema          string
	Version, Latest int
}

func (e *SchemaVersionError) Error() string {
	if e.Version < e.Latest {
		return fmt.Sprintf("schema %q is at version %d (latest %d), run: drover migrate", e.Schema, e.Version, e.Latest)
	}
	return fmt.Sprintf("schema %q is at version %d, but this binary knows versions up to %d: upgrade drover to a release that knows version %d",
		e.Schema, e.Version, e.Latest, e.Version)
}

func (e *SchemaVersionError) Unwrap() error {
	if e.Version < e.Latest {
		return ErrSchemaMissing
	}
	return ErrSchemaNewer
}
