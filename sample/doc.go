// Package sample generates the synthetic tables bundled with the tool as demo and test
// data. The records are invented: no row describes a real person.
//
// Hospital writes a seeded table of hospital admissions whose columns resemble those of
// a real release candidate (direct identifiers, quasi-identifiers with skewed
// distributions and rare combinations, a sensitive diagnosis, an insensitive number),
// so that testdata/hospital.yaml (the example) and testdata/hospital-tests.yaml (the
// tests' fixture) can be run end to end on it.
//
// It imports nothing of this module: gen writes its tables, tests read them.
package sample
