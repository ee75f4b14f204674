package drover

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// MigrateResult says what Migrate did.
type MigrateResult struct {
	// Applied lists the migrations this call applied (none when the store
	// was already current).
	Applied []drovertype.Migration
	// Version is the schema version after the call.
	Version int
}

// Migrate brings the store's schema to the latest version this binary
// knows. It is idempotent, and safe to run from several processes at once:
// the store's migration lock lets each migration apply exactly once.
func Migrate(ctx context.Context, d droverdriver.Driver) (*MigrateResult, error) {
	found, applied, err := droverdriver.MigrateUpTo(ctx, d, math.MaxInt)
	if errors.Is(err, ErrSchemaNewer) {
		return nil, err // it names the schema and says what to do
	}
	if err != nil {
		return nil, fmt.Errorf("migrate schema %q: %w", d.Schema(), err)
	}
	res := &MigrateResult{Version: found}
	for _, mig := range applied {
		res.Applied = append(res.Applied, mig)
		res.Version = mig.Version
	}
	return res, nil
}

// MigrationStatus reports the store's schema version and the latest this
// binary knows. droverdriver.CheckSchemaVersion turns them into an error
// when they differ.
func MigrationStatus(ctx context.Context, d droverdriver.Driver) (current, latest int, err error) {
	current, err = d.SchemaVersion(ctx)
	if err != nil {
		return 0, 0, err
	}
	return current, droverdriver.LatestVersion(d), nil
}
