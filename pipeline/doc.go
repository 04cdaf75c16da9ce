// Package pipeline runs a release end to end: it reads the input table in batches,
// encodes the quasi-identifiers, runs the search, streams the input again to recode
// and suppress, writes the release to a temporary file, verifies it independently,
// renames it into place and writes the report. Stages run under one errgroup.
package pipeline
