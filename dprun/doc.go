// Package dprun is the differentially private run (sanitize dp, and the DP outputs of
// sanitize-beam): read the columns the outputs use, map every value to a cell of its
// column's declared domain, bound each privacy unit's contribution, count, add noise
// from Google's library (through dphist), post-process, write every output and the
// manifest into a temporary folder, record the spend in the ledger, and only then move
// the folder into place. Record, then release: a failure after the record leaves the
// budget spent and nothing published, never the reverse.
//
// It may import schema, fault, dphist, job, table, report, publish, internal/build and
// internal/safe (docs/design.md's package table); nothing of the k/l/t release.
package dprun
