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
// validate does), the command's paths and formats, its destinations — into a runPlan,
// the one step that takes the configuration; runPlan.open (job.NewPlan; for a release,
// openRun) checks what needs the input's header and types and plans its columns; the
// stages (encode, search, write, verify, publish; Check's and Risk's steps) take the
// plan and read the configuration through it. Checks that need the records (values
// against hierarchies, the population, the level bounds against built hierarchies) are
// made by the stage that reads them. The helpers that turn one section of a
// configuration into what a stage needs (modelOptions, levelBounds, the risk models,
// the report's and the metadata's parameters) take the configuration, as Engine's
// methods hand it to the beam module.
package release
