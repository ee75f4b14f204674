package clientapi_test

import (
	"database/sql"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/clientapi"
)

// Every *drover.Client implements the interface, whatever its store.
var (
	_ clientapi.Client = (*drover.Client[pgx.Tx])(nil)
	_ clientapi.Client = (*drover.Client[*sql.Tx])(nil)
)
