package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// fakeExec stores one queue's settings and records the claims it runs.
type fakeExec struct {
	droverdriver.Executor
	settings *drovertype.QueueSettings
	reads    int
	claims   []droverdriver.ClaimParams
}

func (f *fakeExec) QueueSettingsGet(_ context.Context, queue string) (*drovertype.QueueSettings, error) {
	f.reads++
	if f.settings == nil || f.settings.Queue != queue {
		return nil, nil
	}
	s := *f.settings
	return &s, nil
}

func (f *fakeExec) JobClaim(_ context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	f.claims = append(f.claims, p)
	return []*drovertype.JobRow{{ID: 1}}, nil
}

// clock is a settable time source for Settings.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func setup(t *testing.T) (*fakeExec, *Settings, *clock) {
	t.Helper()
	clk := &clock{t: time.Unix(1_000_000, 0)}
	return &fakeExec{}, &Settings{Now: clk.now}, clk
}

func claim(t *testing.T, ex *fakeExec, s *Settings) []*drovertype.JobRow {
	t.Helper()
	return claimKinds(t, ex, s, nil)
}

// claimKinds claims as a claimer that runs kinds (nil: every kind).
func claimKinds(t *testing.T, ex *fakeExec, s *Settings, kinds []string) []*drovertype.JobRow {
	t.Helper()
	rows, err := Claim(context.Background(), ex, s, droverdriver.ClaimParams{Queue: "q", Max: 5, Kinds: kinds})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestClaimAppliesStoredSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		settings    *drovertype.QueueSettings
		wantClaim   bool
		wantLimited bool
	}{
		{"none stored", nil, true, false},
		{"stored without limits", &drovertype.QueueSettings{Queue: "q"}, true, false},
		{"paused", &drovertype.QueueSettings{Queue: "q", Paused: true}, false, false},
		{"paused and limited", &drovertype.QueueSettings{Queue: "q", Paused: true, Limit: drovertype.QueueLimit{MaxRunning: 2}}, false, false},
		{"global limit", &drovertype.QueueSettings{Queue: "q", Limit: drovertype.QueueLimit{MaxRunning: 2}}, true, true},
		{"rate limit", &drovertype.QueueSettings{Queue: "q", Limit: drovertype.QueueLimit{Rate: 1, Period: time.Second}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ex, s, _ := setup(t)
			ex.settings = tt.settings
			rows := claim(t, ex, s)
			if got := len(ex.claims) == 1; got != tt.wantClaim {
				t.Fatalf("claim statement ran: %v, want %v", got, tt.wantClaim)
			}
			if !tt.wantClaim {
				if len(rows) != 0 {
					t.Fatalf("a paused queue returned %d jobs", len(rows))
				}
				return
			}
			if ex.claims[0].Limited != tt.wantLimited {
				t.Fatalf("Limited = %v, want %v", ex.claims[0].Limited, tt.wantLimited)
			}
		})
	}
}

// TestClaimLeavesPausedKinds: the kinds paused in a queue reach the claim
// statement as ExceptKinds for a claimer of every kind, and are taken out
// of a claimer's own kinds; a claimer whose every kind is paused runs no
// statement.
func TestClaimLeavesPausedKinds(t *testing.T) {
	t.Parallel()
	paused := &drovertype.QueueSettings{Queue: "q", PausedKinds: []string{"a", "b"}}
	tests := []struct {
		name       string
		settings   *drovertype.QueueSettings
		kinds      []string
		wantClaim  bool
		wantKinds  []string
		wantExcept []string
	}{
		{"every kind, none paused", nil, nil, true, nil, nil},
		{"every kind", paused, nil, true, nil, []string{"a", "b"}},
		{"named kinds, one paused", paused, []string{"a", "c"}, true, []string{"c"}, nil},
		{"named kinds, none paused", paused, []string{"c"}, true, []string{"c"}, nil},
		{"named kinds, all paused", paused, []string{"b", "a"}, false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ex, s, _ := setup(t)
			ex.settings = tt.settings
			rows := claimKinds(t, ex, s, tt.kinds)
			if got := len(ex.claims) == 1; got != tt.wantClaim {
				t.Fatalf("claim statement ran: %v, want %v", got, tt.wantClaim)
			}
			if !tt.wantClaim {
				if len(rows) != 0 {
					t.Fatalf("claimed %d jobs of paused kinds", len(rows))
				}
				return
			}
			if c := ex.claims[0]; !slices.Equal(c.Kinds, tt.wantKinds) || !slices.Equal(c.ExceptKinds, tt.wantExcept) {
				t.Fatalf("claimed kinds %q except %q, want %q except %q", c.Kinds, c.ExceptKinds, tt.wantKinds, tt.wantExcept)
			}
		})
	}
}

// TestSettingsCache: settings are read once per SettingsTTL, and Forget
// (a change announced by the store, or made by this process) makes the
// next claim read them again at once.
func TestSettingsCache(t *testing.T) {
	t.Parallel()
	ex, s, clk := setup(t)
	claim(t, ex, s)
	claim(t, ex, s)
	if ex.reads != 1 {
		t.Fatalf("%d settings reads for two claims within the TTL, want 1", ex.reads)
	}
	ex.settings = &drovertype.QueueSettings{Queue: "q", Paused: true}
	clk.t = clk.t.Add(SettingsTTL - time.Millisecond)
	if len(claim(t, ex, s)) != 1 {
		t.Fatal("a cached unpaused setting must hold until the TTL")
	}
	clk.t = clk.t.Add(time.Millisecond)
	if len(claim(t, ex, s)) != 0 || ex.reads != 2 {
		t.Fatalf("after the TTL: the pause is not seen (%d reads)", ex.reads)
	}
	ex.settings.Paused = false
	s.Forget("q")
	if len(claim(t, ex, s)) != 1 || ex.reads != 3 {
		t.Fatalf("after Forget: the resume is not seen (%d reads)", ex.reads)
	}
	if got, ok := s.Peek("q"); !ok || got.Paused {
		t.Fatalf("Peek = %+v, %v", got, ok)
	}
}

// TestClaimVariant checks the statement named for every shape of claim,
// and that Claim hands drivers the one its stored settings call for.
func TestClaimVariant(t *testing.T) {
	t.Parallel()
	after := &droverdriver.ClaimPosition{ID: 7}
	worker := &droverdriver.Worker{Type: "gpu"}
	tests := []struct {
		name   string
		p      droverdriver.ClaimParams
		strict bool
		want   droverdriver.ClaimVariant
	}{
		{"nothing said", droverdriver.ClaimParams{}, false, droverdriver.ClaimPlain},
		{"past a position", droverdriver.ClaimParams{After: after}, false, droverdriver.ClaimAfter},
		{"kinds", droverdriver.ClaimParams{Kinds: []string{"a"}}, false, droverdriver.ClaimKinds},
		{"kinds past a position", droverdriver.ClaimParams{Kinds: []string{"a"}, After: after}, false, droverdriver.ClaimKindsAfter},
		{"kinds and paused kinds", droverdriver.ClaimParams{Kinds: []string{"a", "b"}, ExceptKinds: []string{"b"}}, false, droverdriver.ClaimKinds},
		{"paused kinds", droverdriver.ClaimParams{ExceptKinds: []string{"b"}}, false, droverdriver.ClaimExcept},
		{"paused kinds past a position", droverdriver.ClaimParams{ExceptKinds: []string{"b"}, After: after}, false, droverdriver.ClaimExceptAfter},
		{"a worker", droverdriver.ClaimParams{Worker: worker, Kinds: []string{"a"}, After: after}, false, droverdriver.ClaimRouted},
		{"strict", droverdriver.ClaimParams{Limited: true, Kinds: []string{"a"}}, true, droverdriver.ClaimStrict},
		{"strict, as a worker", droverdriver.ClaimParams{Limited: true, Worker: worker}, true, droverdriver.ClaimStrict},
	}
	for _, tt := range tests {
		if got := ClaimVariant(tt.p, tt.strict); got != tt.want {
			t.Errorf("%s: variant %d, want %d", tt.name, got, tt.want)
		}
	}

	for _, tt := range []struct {
		name     string
		settings *drovertype.QueueSettings
		p        droverdriver.ClaimParams
		want     droverdriver.ClaimVariant
	}{
		{"no settings", nil, droverdriver.ClaimParams{Queue: "q", Max: 5}, droverdriver.ClaimPlain},
		{"paused kinds", &drovertype.QueueSettings{Queue: "q", PausedKinds: []string{"b"}}, droverdriver.ClaimParams{Queue: "q", Max: 5}, droverdriver.ClaimExcept},
		{"limited", &drovertype.QueueSettings{Queue: "q", Limit: drovertype.QueueLimit{MaxRunning: 2}}, droverdriver.ClaimParams{Queue: "q", Max: 5, After: after}, droverdriver.ClaimAfter},
		{"strict order", &drovertype.QueueSettings{Queue: "q", Strict: 1}, droverdriver.ClaimParams{Queue: "q", Max: 5, Worker: worker}, droverdriver.ClaimStrict},
	} {
		ex, s, _ := setup(t)
		ex.settings = tt.settings
		if _, err := Claim(context.Background(), ex, s, tt.p); err != nil {
			t.Fatal(err)
		}
		if len(ex.claims) != 1 || ex.claims[0].Variant != tt.want {
			t.Errorf("%s: claims %+v, want one of variant %d", tt.name, ex.claims, tt.want)
		}
	}
}
