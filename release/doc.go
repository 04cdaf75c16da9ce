// Package release runs a release end to end, as stage functions: it reads the input
// table in batches, encodes the quasi-identifiers, runs the search, streams the input
// again to recode and suppress, writes the release to a temporary file, verifies it
// independently, renames it into place and writes the report. It also re-checks a
// written release against its input (Check) and analyses an input's risk (Risk);
// package validate runs its checks of a configuration and an input (CheckConfig,
// CheckInput); the beam module runs a release's stages on Apache Beam through Engine,
// the one seam for another engine. It imports neither dprun nor validate.
//
// A run's configuration is checked, then planned, then staged: planRelease (planCheck,
// planRisk) checks everything that needs no data — the configuration (CheckConfig, as
// validate does), the command's paths and formats, its destinations — into a runPlan;
// openRun (openInput, job.NewPlan) checks what needs the input's header and types and
// plans its columns; the stages (encode, search, write, verify, publish) take the plan.
// Checks that need the records (values against hierarchies, the population, the level
// bounds against built hierarchies) are made by the stage that reads them.
package release
