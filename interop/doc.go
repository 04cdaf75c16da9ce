// Package interop holds tests, in a module of their own, that read the main module's
// Parquet releases with another engine (DuckDB, in process) and check them there:
// column types and encodings, the sanitize.* key-value metadata against the release's
// JSON report, and the classes recounted with SQL. Being its own module, it keeps
// DuckDB out of the sanitize binary's dependencies. Run it with `make interop`.
package interop
