// Package job holds what the release and the DP run share: the plan of the input's
// columns (Plan: each column's role and type, checked against the input's header),
// the run's options (Options), its progress, and the configuration's hierarchy files,
// read once.
//
// It may import schema, fault, generalize, table, verify and internal/readfile
// (docs/design.md's package table); nothing that writes a release.
package job
