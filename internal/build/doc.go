// Package build holds the tool's version as the build recorded it (Version), which
// reports, manifests and release metadata carry. It imports nothing of the project.
package build
