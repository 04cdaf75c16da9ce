package interop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rewrite is a change made to a release by DuckDB: the release is loaded into the
// table r (with its record number rid), edit runs on it, and it is written back as
// Parquet with the release's key-value metadata (changed by kv), in record order.
type rewrite struct {
	name    string
	base    *releaseCase               // the release rewritten (nil: the hospital sample's)
	edit    func(r *released) []string // SQL statements run on table r
	kv      func(kv map[string]string) // changes the key-value metadata written
	columns string                     // the SELECT list written ("" = every column of r but rid)
	options string                     // more COPY options
	want    []error                    // the failure kinds checkRelease must report, exactly
}

// rewrites are the changes the checks must notice, and one that they must not: a
// faithful copy of the release by DuckDB.
var rewrites = []rewrite{
	{name: "faithful copy"},
	{name: "a class below k", edit: classBelowK, want: []error{errBelowK, errClasses}},
	{name: "a class removed", edit: classRemoved, want: []error{errRows, errClasses}},
	{name: "k in the metadata", kv: func(kv map[string]string) { kv["sanitize.k"] += "0" }, want: []error{errMetadata}},
	{name: "metadata key missing", kv: func(kv map[string]string) { delete(kv, "sanitize.suppressed") }, want: []error{errMetadata}},
	{name: "a diagnosis in the metadata", kv: func(kv map[string]string) { kv["note"] = "see Pneumonia" }, want: []error{errLeak}},
	{name: "a quasi-identifier without dictionary", options: "DICTIONARY_SIZE_LIMIT 1", want: []error{errEncoding}},
	{name: "an integer narrowed", columns: "* EXCLUDE (rid) REPLACE (CAST(stay_days AS INTEGER) AS stay_days)", want: []error{errColumns}},
	{name: "columns reordered", columns: "sex, * EXCLUDE (rid, sex)", want: []error{errColumns}},
	{name: "a label not in the hierarchy", edit: relabel("sex", "lower(sex)"), want: []error{errUnwritable}},
	{name: "an interval of another shape", edit: relabel("age", "replace(age, ']', ')')"), want: []error{errUnwritable}},
	{name: "a stay changed", edit: func(*released) []string { return []string{"UPDATE r SET stay_days = stay_days + 1000 WHERE rid = 1"} }, want: []error{errKept}},
	{name: "one diagnosis in a class, l-diversity", base: &lDiversityCase, edit: concentrate("diagnosis"), want: []error{errDiversity}},
	{name: "one diagnosis in a class, t-closeness", base: &tClosenessCase, edit: concentrate("diagnosis"), want: []error{errCloseness}},
	{name: "one occupation in a class, entropy l-diversity", base: &adultCase, edit: concentrate("occupation"), want: []error{errDiversity}},
}

// TestCheckerDetectsRewrites releases the hospital sample, rewrites the release with
// DuckDB in each of the ways above, and checks the copy with checkRelease, the
// function every release of the suite goes through: a faithful copy passes, and each
// change is reported as exactly the failures it causes.
func TestCheckerDetectsRewrites(t *testing.T) {
	hospital := releaseParquet(t, repo+"/testdata/hospital-tests.yaml", hospitalCSV(t))
	ctx := context.Background()
	for _, rw := range rewrites {
		t.Run(rw.name, func(t *testing.T) {
			r := hospital
			if rw.base != nil {
				r = releaseParquet(t, rw.base.config, rw.base.input(t))
			}
			db := openDuckDB(t)
			out := filepath.Join(t.TempDir(), "rewritten.parquet")
			if err := rw.apply(ctx, db, r, out); err != nil {
				t.Fatal(err)
			}
			err := checkRelease(ctx, db, r, out)
			if got := kinds(err); !slices.Equal(got, names(rw.want)) {
				t.Errorf("the checks report %q, want %q; in full:\n%v", got, names(rw.want), err)
			}
		})
	}
}

// apply writes the rewritten release to out.
func (rw rewrite) apply(ctx context.Context, db *sql.DB, r *released, out string) error {
	kv, err := (&subject{db: db, path: r.Output}).metadata(ctx)
	if err != nil {
		return err
	}
	delete(kv, "ARROW:schema") // DuckDB writes no Arrow schema
	if rw.kv != nil {
		rw.kv(kv)
	}
	stmts := []string{"CREATE TABLE r AS SELECT row_number() OVER () AS rid, * FROM " + parquet(r.Output)}
	if rw.edit != nil {
		stmts = append(stmts, rw.edit(r)...)
	}
	cols := rw.columns
	if cols == "" {
		cols = "* EXCLUDE (rid)"
	}
	var meta []string
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		meta = append(meta, literal(k)+": "+literal(kv[k]))
	}
	options := "FORMAT parquet, KV_METADATA {" + strings.Join(meta, ", ") + "}"
	if rw.options != "" {
		options += ", " + rw.options
	}
	stmts = append(stmts, "COPY (SELECT "+cols+" FROM r ORDER BY rid) TO "+literal(out)+" ("+options+")")
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%w\nin: %s", err, s)
		}
	}
	return nil
}

// quasiOf is the quasi-identifiers of a release's configuration, quoted, as a SQL list.
func quasiOf(r *released) string {
	var q []string
	for _, c := range r.Columns {
		if c.Role == "quasi" {
			q = append(q, ident(c.Name))
		}
	}
	return strings.Join(q, ", ")
}

// classBelowK moves records of the largest class into the second largest until k−1
// are left: the records, the number of classes and every value stay as they were.
func classBelowK(r *released) []string {
	q := quasiOf(r)
	var set []string
	for _, c := range strings.Split(q, ", ") {
		set = append(set, c+" = b."+c)
	}
	return []string{
		"CREATE TABLE a AS SELECT " + q + " FROM r GROUP BY ALL ORDER BY count(*) DESC, " + q + " LIMIT 1",
		"CREATE TABLE b AS SELECT " + q + " FROM r GROUP BY ALL ORDER BY count(*) DESC, " + q + " LIMIT 1 OFFSET 1",
		fmt.Sprintf("UPDATE r SET %s FROM b WHERE rid IN (SELECT rid FROM r JOIN a USING (%s) ORDER BY rid OFFSET %d)", strings.Join(set, ", "), q, r.K-1),
	}
}

// concentrate gives the smallest class the lowest values of the sensitive column and
// the other records the rest, in record order: the column holds the same values as
// before, but the class holds one or two of them.
func concentrate(column string) func(r *released) []string {
	return func(r *released) []string {
		q, c := quasiOf(r), ident(column)
		return []string{
			"CREATE TABLE a AS SELECT " + q + " FROM r GROUP BY ALL ORDER BY count(*), " + q + " LIMIT 1",
			"CREATE TABLE v AS SELECT " + c + " AS v, row_number() OVER (ORDER BY " + c + ") AS pos FROM r",
			"CREATE TABLE o AS SELECT rid, row_number() OVER (ORDER BY rid NOT IN (SELECT rid FROM r JOIN a USING (" + q + ")), rid) AS pos FROM r",
			"UPDATE r SET " + c + " = v.v FROM o JOIN v USING (pos) WHERE r.rid = o.rid",
		}
	}
}

// classRemoved deletes the records of the largest class.
func classRemoved(r *released) []string {
	q := quasiOf(r)
	return []string{
		"CREATE TABLE a AS SELECT " + q + " FROM r GROUP BY ALL ORDER BY count(*) DESC, " + q + " LIMIT 1",
		"DELETE FROM r WHERE rid IN (SELECT rid FROM r JOIN a USING (" + q + "))",
	}
}

// relabel sets a column of every record to the SQL expression expr.
func relabel(column, expr string) func(*released) []string {
	return func(*released) []string {
		return []string{fmt.Sprintf("UPDATE r SET %s = %s", ident(column), expr)}
	}
}

// failureKinds are the kinds of failure checkRelease reports, in order.
var failureKinds = []error{errColumns, errEncoding, errMetadata, errLeak, errRows, errBelowK, errClasses, errDiversity, errCloseness, errUnwritable, errKept}

// kinds names the failure kinds err holds, in the order of failureKinds, then any
// other error it holds (a query that failed) as itself.
func kinds(err error) []string {
	var out, other []string
	for _, k := range failureKinds {
		if errors.Is(err, k) {
			out = append(out, k.Error())
		}
	}
	for _, e := range leaves(err) {
		if !slices.ContainsFunc(failureKinds, func(k error) bool { return errors.Is(e, k) }) {
			other = append(other, e.Error())
		}
	}
	return append(out, other...)
}

// leaves is the errors joined in err (by errors.Join, at any depth).
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// names names the given failure kinds in the order of failureKinds.
func names(want []error) []string {
	var out []string
	for _, k := range failureKinds {
		if slices.Contains(want, k) {
			out = append(out, k.Error())
		}
	}
	return out
}
