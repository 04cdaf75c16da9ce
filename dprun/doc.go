// Package dprun is the differentially private run (sanitize dp, and the DP outputs of
// sanitize-beam): read the columns the outputs use, map every value to a cell of its
// column's declared domain, bound each privacy unit's contribution, count, add noise
// from Google's library (through dphist), post-process, write every output and the
// manifest into a temporary folder, record the spend in the ledger, and only then move
// the folder into place. Record, then release: a failure after the record leaves the
// budget spent and nothing published, never the reverse.
//
// A run is checked, then planned, then staged: prepare makes every check that needs no
// record (CheckConfig, as validate runs it; the paths; the spend against the totals and
// the ledger) into a run, whose methods are the stages (read, noise, record, write);
// the configuration enters once, at prepare (or Publish, for a run noised on Beam).
//
// It may import schema, fault, dphist, job, table, report, publish, internal/build and
// internal/safe (docs/design.md's package table); nothing of the k/l/t release.
package dprun
