// Package sample generates the synthetic tables bundled with the tool as demo and test
// data. The records are invented: no row describes a real person.
//
// Hospital writes a seeded table of hospital admissions whose columns resemble those of
// a real release candidate (direct identifiers, quasi-identifiers with skewed
// distributions and rare combinations, a sensitive diagnosis, an insensitive number),
// so that testdata/hospital.yaml (the example) and testdata/hospital-tests.yaml (the
// tests' fixture) can be run end to end on it.
//
// Admissions writes a seeded table of the same columns with several admissions per
// patient (1 to MaxAdmissions, a truncated zeta distribution): the demographics are
// constant per patient, the dates increase and the diagnoses vary per admission, as a
// person-level release needs (testdata/admissions.yaml).
//
// It imports nothing of this module: gen writes its tables, tests read them.
package sample
