package interop

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// openDuckDB opens an in-process, in-memory DuckDB database whose time zone is UTC,
// closed when t ends.
func openDuckDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatalf("opening DuckDB: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("SET GLOBAL TimeZone = 'UTC'"); err != nil {
		t.Fatalf("DuckDB time zone: %v", err)
	}
	return db
}

// ident quotes a column name for SQL.
func ident(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// literal quotes a string (a path, a value) for SQL.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// parquet is the SQL relation of a Parquet file.
func parquet(path string) string { return "read_parquet(" + literal(path) + ")" }

// queryInt runs a query that returns one integer.
func queryInt(ctx context.Context, db *sql.DB, query string, args ...any) (int64, error) {
	var n sql.NullInt64
	if err := db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%w\nin: %s", err, query)
	}
	return n.Int64, nil
}

// queryStrings runs a query and returns the rows of its string columns.
func queryStrings(ctx context.Context, db *sql.DB, query string, args ...any) ([][]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%w\nin: %s", err, query)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("%w\nin: %s", err, query)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w\nin: %s", err, query)
	}
	return out, nil
}
