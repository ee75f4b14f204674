package server

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/droverhq/drover/droverdriver"
)

// reportingDriver is a driver whose executor's errors say "unavailable"
// when they are errOutage; the drivers' own tests check what they
// classify.
type reportingDriver struct{ droverdriver.Driver }

func (reportingDriver) Executor() droverdriver.Executor { return reportingExecutor{} }

type reportingExecutor struct{ droverdriver.Executor }

var errOutage = errors.New("outage")

func (reportingExecutor) Unavailable(err error) bool { return errors.Is(err, errOutage) }

// TestStoreUnavailable checks which errors count as the store being out of
// reach (503) and which stay failures of a statement (500): a deadline
// that ran out for any store, and what the driver reports as an outage.
func TestStoreUnavailable(t *testing.T) {
	tests := []struct {
		name   string
		driver droverdriver.Driver
		err    error
		want   bool
	}{
		{"deadline", reportingDriver{}, fmt.Errorf("claim: %w", context.DeadlineExceeded), true},
		{"deadline, driver without reporter", nil, fmt.Errorf("claim: %w", context.DeadlineExceeded), true},
		{"reported outage", reportingDriver{}, fmt.Errorf("read: %w", errOutage), true},
		{"unreported failure", reportingDriver{}, errors.New("some statement failed"), false},
		{"driver without reporter", nil, fmt.Errorf("read: %w", errOutage), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{cfg: Config{Driver: tt.driver}}
			if got := s.storeUnavailable(tt.err); got != tt.want {
				t.Errorf("storeUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
