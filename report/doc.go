// Package report holds what the runs tell their users: the JSON report of a release,
// the manifest of a DP run, what validate found, and the short summaries printed on
// stdout for each. It holds counts and parameters only, never a data value, and knows
// nothing of flags or of how the results were computed.
//
// It may import schema, diversity, closeness, risk, generalize, verify and dphist, for
// the figures and the models' variants they hand over (docs/design.md's package table);
// nothing that runs a stage or touches a file.
package report
