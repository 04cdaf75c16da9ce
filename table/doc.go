// Package table holds the format-neutral sources and sinks of the tool's tables: CSV,
// Parquet (through arrow-go's pqarrow) and Arrow IPC, read and written as Arrow arrays
// in batches; tables in parts (a folder or a glob of files); the checks of an input or
// release file (a regular file, its paths, the files a path names). A source streams
// projected columns as text in one canonical form per type (table.go says which), or
// as keys or Arrow arrays where the file has them.
//
// It may import schema, fault, internal/build, internal/readfile and internal/safe
// (docs/design.md's package table); nothing of the search or the verifier, which reads
// files with decoders of its own.
package table
