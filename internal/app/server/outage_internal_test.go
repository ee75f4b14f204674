package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droversqlite"
)

// reportingDriver is a driver whose executor's errors say "unavailable"
// when they are errOutage (reports), or that tells nothing of its errors;
// the drivers' own tests check what they classify.
type reportingDriver struct {
	droverdriver.TxDriver[*sql.Tx]
	reports bool
}

func (d reportingDriver) Executor() droverdriver.Executor {
	if d.reports {
		return reportingExecutor{d.TxDriver.Executor()}
	}
	return silentExecutor{d.TxDriver.Executor()}
}

type reportingExecutor struct{ droverdriver.Executor }

// silentExecutor hides the wrapped executor's own UnavailableReporter.
type silentExecutor struct{ droverdriver.Executor }

var errOutage = errors.New("outage")

func (reportingExecutor) Unavailable(err error) bool { return errors.Is(err, errOutage) }

// TestStoreUnavailable checks which errors count as the store being out of
// reach (503) and which stay failures of a statement (500): a deadline
// that ran out for any store, and what the driver reports as an outage.
func TestStoreUnavailable(t *testing.T) {
	d, err := droversqlite.Open(context.Background(), filepath.Join(t.TempDir(), "drover.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	tests := []struct {
		name    string
		reports bool
		err     error
		want    bool
	}{
		{"deadline", true, fmt.Errorf("claim: %w", context.DeadlineExceeded), true},
		{"deadline, driver without reporter", false, fmt.Errorf("claim: %w", context.DeadlineExceeded), true},
		{"reported outage", true, fmt.Errorf("read: %w", errOutage), true},
		{"unreported failure", true, errors.New("some statement failed"), false},
		{"driver without reporter", false, fmt.Errorf("read: %w", errOutage), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, err := drover.NewClient[*sql.Tx](reportingDriver{TxDriver: d, reports: tt.reports}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := &Server{store: client.Store()}
			if got := s.storeUnavailable(tt.err); got != tt.want {
				t.Errorf("storeUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
