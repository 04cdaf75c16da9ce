package release

import (
	"time"

	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

// Engine is the seam for running a release's stages on another engine than Release's
// own: the beam module reads, encodes, searches and writes a release on Apache Beam,
// and takes from Engine what Release decides for itself, so that both refuse the same
// paths, search with the same options, write the same part names, dictionaries and
// metadata, and report the same document; then it checks what it wrote with Check.
// Nothing else uses it: a release on one machine is Release. Config is the release's
// configuration (CheckConfig'd); the methods that need none work on the zero Engine.
type Engine struct {
	Config *schema.Config
}

// InputOutput is the release's input and output: opt.Input and opt.Output, else the
// configuration's input.path and output.path; either missing is bad input.
func (e Engine) InputOutput(opt job.Options) (in, out string, err error) {
	return inputOutput(e.Config, opt)
}

// CheckDestination refuses, as bad input naming key, a destination dest (a folder of
// parts when folder is set) that would overwrite what the release over the input in
// reads, as Release refuses it.
func (e Engine) CheckDestination(in, key, dest string, folder bool) error {
	return checkDestination(e.Config, in, key, dest, folder)
}

// CheckReport refuses, before anything is read, any report (opt.ReportPaths) the
// release could not publish or that would overwrite its input or its output out, as
// Release refuses it.
func (e Engine) CheckReport(opt job.Options, in, out string) error {
	return checkReport(e.Config, opt, in, out)
}

// SubsetFlag reads a research subset's flag as Release's pass 1 reads it: true, 1 or
// yes, or false, 0 or no, case and surrounding space ignored.
func (Engine) SubsetFlag(v string) (in, ok bool) {
	return subsetFlag(v)
}

// BuildHierarchy builds the hierarchy col's configuration describes (intervals, a mask
// or dates) over values, the column's distinct values from every part: value i is
// leaf i. A value the builder cannot read is a *generalize.ValueError naming its
// index, never the value.
func (Engine) BuildHierarchy(col schema.Column, values []string) (*generalize.Hierarchy, error) {
	return buildColumnHierarchy(col, values)
}

// SensitiveModels numbers the protected sensitive columns over present[name] (every
// value of the column in the input's parts, in an order fixed for the run) and adds
// their requirements to opt, as Release does; hier holds the hierarchy files' bytes.
func (e Engine) SensitiveModels(hier *job.HierFiles, present map[string][]string, opt *generalize.Options) ([]SensitiveColumn, error) {
	return sensitiveModels(e.Config, hier, present, opt)
}

// ModelOptions is the part of the search's options the configuration decides for a
// table of rows records whose quasi-identifiers are cols (k, suppression, metric,
// level bounds, risk models), as Release's search takes them; the caller adds the
// protected columns' models and the population.
func (e Engine) ModelOptions(cols []generalize.Column, rows int) (generalize.Options, error) {
	return modelOptions(e.Config, cols, rows)
}

// PopulationModel is the models a research subset's classes are decided by against
// the population (δ-presence, k-map, the journalist's profitability), as the CLI's
// search takes them; the caller gives the population's records.
func (e Engine) PopulationModel() generalize.Population { return populationModel(e.Config) }

// LevelBounds is search.min-levels and search.max-levels in the order of the
// quasi-identifiers cols (0 and −1 where a column has no bound; nil, nil when neither
// is set); a bound above a hierarchy's top is bad input at its key.
func (e Engine) LevelBounds(cols []generalize.Column) (lo, hi []int, err error) {
	return levelBounds(e.Config, cols)
}

// PartName is the file name of release part i of n in the given format, as Release
// names a folder's parts: part-00000.parquet, ….
func (Engine) PartName(i, n int, format schema.Format) string {
	return partName(i, n, format)
}

// ReleasedCodes is, per quasi-identifier (cols, in the search's order), which codes
// at its level the published classes of covers hold: what a release's dictionary of
// the column holds.
func (Engine) ReleasedCodes(cols []generalize.Column, levels []int, covers generalize.ClassCovers) [][]bool {
	return releasedCodes(cols, levels, covers)
}

// ReleaseMetadata is the key-value metadata of a Parquet or Arrow release of rows
// records whose quasi-identifiers are quasi, at the search's result res, written at
// now: what every part carries, the same as Release writes.
func (e Engine) ReleaseMetadata(quasi []generalize.Column, rows int, res *generalize.Result, now time.Time) map[string]string {
	return releaseMetadata(e.Config, quasi, rows, res, now)
}

// Generalized is, per quasi-identifier, what a full-domain release at levels
// publishes of it (released: ReleasedCodes), as the report lists it.
func (Engine) Generalized(cols []generalize.Column, levels []int, released [][]bool) []report.QuasiRelease {
	return generalizedColumns(cols, levels, released)
}

// NewReport is the report of the release that found f: the same document Release
// writes.
func (e Engine) NewReport(f Facts) (*report.Report, error) {
	return newReport(e.Config, f)
}

// PrepareReports writes the report rep to a temporary file beside each of paths (in
// the format each name says), held until the caller publishes them (Reports.Publish)
// or discards them.
func (Engine) PrepareReports(paths []string, rep *report.Report) (*Reports, error) {
	return prepareReleaseReports(paths, rep)
}
