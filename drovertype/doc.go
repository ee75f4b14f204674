// Package drovertype holds the values that Drover's users, its client and
// every store share: a job as stored (JobRow) and its states, the lease
// token a claim issues, where a job may run (Routing), a queue's stored
// settings, the worker registry, batches and results, topic lag and the
// stored history of queue figures.
//
// A driver (droverdriver) returns these values and the client hands the
// same values to users, so that each concept has one shape: no mirror
// types and no conversions at the boundary between the client and a
// store. The package imports nothing of Drover's, so that any package,
// a driver or a tool, can name these values without importing the client.
package drovertype
