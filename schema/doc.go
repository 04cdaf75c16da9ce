// Package schema holds the release configuration: its YAML format (decoded strictly:
// unknown keys are errors), validation and defaults, the roles and types of columns,
// and the enumerations of its values as types.
//
// It imports, of this module, only fault (the error kinds), internal/readfile,
// internal/safe, and diversity, closeness and risk, whose variants, distances and
// estimators it reads as their own types (docs/design.md's package table): every other
// package may import it, and it knows nothing of tables, the search or the runs.
package schema
