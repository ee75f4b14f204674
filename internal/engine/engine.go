// Package engine decides every path of a job's life — insert, claim,
// finish, settling workflows and batches, promoting ordering keys, freeing
// unique keys, applying queue settings — from the columns the store
// returns, never from what a caller sends back. It holds no SQL: each step
// is a call to a droverdriver.Executor method that runs one statement (or a
// fixed pipeline) in the store's dialect, so PostgreSQL and SQLite follow
// one algorithm.
//
// Functions take the Executor to run on as an argument, so the same code
// runs on a driver's pool and inside a caller's transaction
// (Driver.UnwrapExecutor). The fast paths stay one round trip per batch:
// the engine composes statements only for the jobs whose stored flags ask
// for more than moving their row.
package engine
