package drovertest_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertest"
)

type WelcomeArgs struct {
	To string `json:"to"`
}

func (WelcomeArgs) Kind() string { return "welcome" }

// signUp is the application code under test: it stores a user and, in
// the same transaction, schedules their welcome email an hour later.
func signUp(ctx context.Context, client *drover.Client[*sql.Tx], tx *sql.Tx, now time.Time, email string) error {
	// … INSERT INTO users …
	_, err := client.InsertTx(ctx, tx, WelcomeArgs{To: email}, &drover.InsertOpts{Queue: "mail", RunAt: now.Add(time.Hour)})
	return err
}

// exampleT stands in for the *testing.T a test passes to the helpers.
type exampleT struct{}

func (exampleT) Helper()                           {}
func (exampleT) Fatalf(format string, args ...any) { log.Fatalf(format, args...) }

// Example tests code that schedules a job: the job is asserted inside the
// test's transaction, then the clock is moved past its time and the queue
// drained, which runs the real worker.
func Example() {
	ctx := context.Background()
	var t drovertest.TB = exampleT{} // in a test: t *testing.T

	dir, _ := os.MkdirTemp("", "drovertest-example")
	defer os.RemoveAll(dir)
	driver, err := droversqlite.Open(ctx, filepath.Join(dir, "app.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer driver.Close()
	if _, err := drover.Migrate(ctx, driver); err != nil {
		log.Fatal(err)
	}

	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[WelcomeArgs]) error {
		fmt.Println("welcome sent to", j.Args.To)
		return nil
	}))
	clock := drovertest.NewClock(time.Time{})
	client, err := drover.NewClient(driver, &drover.Config{Workers: workers, Clock: clock})
	if err != nil {
		log.Fatal(err)
	}

	tx, err := driver.DB().BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := signUp(ctx, client, tx, clock.Now(), "ada@example.com"); err != nil {
		log.Fatal(err)
	}
	job := drovertest.RequireInsertedTx(ctx, t, driver, tx, WelcomeArgs{To: "ada@example.com"},
		&drovertest.InsertedOpts{Queue: "mail", ScheduledAt: clock.Now().Add(time.Hour)})
	fmt.Println("inserted:", job.Kind, "for", job.Args.To, "in", job.RunAt.Sub(clock.Now()))

	fmt.Println("ran now:", len(drovertest.DrainTx(ctx, t, client, tx, "mail")))
	clock.Advance(time.Hour)
	for _, r := range drovertest.DrainTx(ctx, t, client, tx, "mail") {
		fmt.Println("ran an hour later:", r.Job.Kind, r.Stored.State)
	}
	_ = tx.Rollback()
	// Output:
	// inserted: welcome for ada@example.com in 1h0m0s
	// ran now: 0
	// welcome sent to ada@example.com
	// ran an hour later: welcome completed
}
