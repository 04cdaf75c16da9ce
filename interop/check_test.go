package interop

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The kinds of failure checkRelease reports; each failure wraps one of them.
var (
	errColumns    = errors.New("column names or types differ from the input's")
	errEncoding   = errors.New("generalized quasi-identifier not dictionary-encoded")
	errMetadata   = errors.New("sanitize.* metadata disagrees with the report")
	errLeak       = errors.New("input value in the key-value metadata")
	errRows       = errors.New("record count disagrees with the report")
	errBelowK     = errors.New("class smaller than k")
	errClasses    = errors.New("classes disagree with the report")
	errDiversity  = errors.New("class below its l-diversity requirement")
	errCloseness  = errors.New("class farther than t from the input's distribution")
	errUnwritable = errors.New("quasi-identifier value the recoder cannot write")
	errKept       = errors.New("kept column holds a value the input does not")
)

// subject is one Parquet file under check: a release (or a rewritten copy of one)
// beside the input, configuration and report it was made from.
type subject struct {
	db    *sql.DB
	r     *released
	rep   *report
	path  string   // the Parquet file checked
	file  string   // its SQL relation
	in    string   // SQL relation of the input
	quasi []string // the quasi-identifiers, quoted, in configuration order
}

// checkRelease reads the Parquet file at path with DuckDB and checks it against the
// release r was made from (its input, configuration and JSON report): columns and
// types, encoding, metadata, counts, classes and values. It returns every failure,
// joined; nil when the file passes.
func checkRelease(ctx context.Context, db *sql.DB, r *released, path string) error {
	rep, err := readReport(r.Report)
	if err != nil {
		return err
	}
	s := &subject{db: db, r: r, rep: rep, path: path, file: parquet(path), in: inputRelation(r, rep.Input.Format)}
	for _, c := range r.Columns {
		if c.Role == "quasi" {
			s.quasi = append(s.quasi, ident(c.Name))
		}
	}
	var errs []error
	for _, check := range []func(context.Context) error{
		s.checkColumns, s.checkEncoding, s.checkMetadata, s.checkLeaks,
		s.checkCounts, s.checkDiversity, s.checkCloseness, s.checkValues, s.checkKept,
	} {
		errs = append(errs, check(ctx))
	}
	return errors.Join(errs...)
}

// inputRelation is the SQL relation of a release's input: a CSV input is read as text,
// as the pipeline reads it.
func inputRelation(r *released, format string) string {
	if format == "csv" {
		return fmt.Sprintf("read_csv(%s, delim=%s, header=true, all_varchar=true)", literal(r.Input), literal(string(r.CSVSep)))
	}
	return parquet(r.Input)
}

// column returns the configuration of the named column, or nil.
func (s *subject) column(name string) *column {
	for i := range s.r.Columns {
		if s.r.Columns[i].Name == name {
			return &s.r.Columns[i]
		}
	}
	return nil
}

// describe returns the column names and DuckDB types of a relation, in order.
func (s *subject) describe(ctx context.Context, relation string) (names, types []string, err error) {
	rows, err := queryStrings(ctx, s.db, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "+relation+")")
	if err != nil {
		return nil, nil, err
	}
	for _, row := range rows {
		names, types = append(names, row[0]), append(types, row[1])
	}
	return names, types, nil
}

// checkColumns checks the release's columns: the input's columns in input order less
// the identifiers (and the columns the configuration does not name), every
// quasi-identifier VARCHAR, every other column of the type the input gives it.
func (s *subject) checkColumns(ctx context.Context) error {
	inNames, inTypes, err := s.describe(ctx, s.in)
	if err != nil {
		return err
	}
	var want []string
	for i, name := range inNames {
		c := s.column(name)
		switch {
		case c == nil || c.Role == "identifier":
			continue
		case c.Role == "quasi":
			want = append(want, name+" VARCHAR")
		case s.rep.Input.Format == "csv":
			want = append(want, name+" "+declaredType(c.Type))
		default:
			want = append(want, name+" "+releasedType(inTypes[i]))
		}
	}
	names, types, err := s.describe(ctx, s.file)
	if err != nil {
		return err
	}
	got := make([]string, len(names))
	for i := range names {
		got[i] = names[i] + " " + types[i]
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%w: DuckDB reads\n\t%s\nwant\n\t%s", errColumns, strings.Join(got, ", "), strings.Join(want, ", "))
	}
	return nil
}

// declaredType is the DuckDB type of a CSV column of the declared type: CSV integers
// are read as signed 64-bit ones, timestamps as instants.
func declaredType(t string) string {
	switch t {
	case "integer":
		return "BIGINT"
	case "float":
		return "DOUBLE"
	case "date":
		return "DATE"
	case "timestamp":
		return "TIMESTAMP WITH TIME ZONE"
	case "boolean":
		return "BOOLEAN"
	default:
		return "VARCHAR"
	}
}

// releasedType is the DuckDB type of a kept column whose input type DuckDB reads as
// in: the same (the release keeps every width, unit and zone).
func releasedType(in string) string { return in }

// checkEncoding checks that every column chunk of every quasi-identifier has a
// dictionary page and a dictionary encoding.
func (s *subject) checkEncoding(ctx context.Context) error {
	var errs []error
	for _, c := range s.r.Columns {
		if c.Role != "quasi" {
			continue
		}
		q := "SELECT count(*) FILTER (dictionary_page_offset IS NULL OR NOT contains(encodings, 'DICTIONARY')), count(*)" +
			" FROM parquet_metadata(" + literal(s.path) + ") WHERE path_in_schema = ?"
		var plain, chunks sql.NullInt64
		if err := s.db.QueryRowContext(ctx, q, c.Name).Scan(&plain, &chunks); err != nil {
			return fmt.Errorf("%w\nin: %s", err, q)
		}
		if plain.Int64 > 0 || (chunks.Int64 == 0 && s.rep.Output.Rows > 0) {
			errs = append(errs, fmt.Errorf("%w: %s: %d of %d column chunks without a dictionary", errEncoding, c.Name, plain.Int64, chunks.Int64))
		}
	}
	return errors.Join(errs...)
}

// metadata returns the file's key-value metadata.
func (s *subject) metadata(ctx context.Context) (map[string]string, error) {
	rows, err := queryStrings(ctx, s.db, "SELECT key, value FROM parquet_kv_metadata("+literal(s.path)+")")
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	for _, row := range rows {
		kv[row[0]] = row[1]
	}
	return kv, nil
}

// wantMetadata is the sanitize.* metadata the report implies, every key with its
// value (the release time is the one releaseParquet gave).
func (s *subject) wantMetadata() map[string]string {
	rep := s.rep
	want := map[string]string{
		"sanitize.tool":              rep.Tool,
		"sanitize.version":           rep.Version,
		"sanitize.dataset":           rep.Dataset,
		"sanitize.config_digest":     rep.ConfigDigest,
		"sanitize.k":                 strconv.Itoa(rep.Model.K),
		"sanitize.suppression_limit": strconv.FormatFloat(rep.Model.SuppressionLimit, 'g', -1, 64),
		"sanitize.max_suppressed":    strconv.Itoa(rep.Model.MaxSuppressed),
		"sanitize.suppressed":        strconv.Itoa(rep.Suppressed),
		"sanitize.input_rows":        strconv.Itoa(rep.Input.Rows),
		"sanitize.algorithm":         rep.Algorithm,
		"sanitize.metric":            rep.Metric.Name,
		"sanitize.metric_value":      strconv.FormatFloat(rep.Metric.Value, 'g', -1, 64),
		"sanitize.created_utc":       releaseTime.UTC().Format(time.RFC3339),
		"sanitize.node":              string(rep.Node),
	}
	if rep.Algorithm == "mondrian" {
		want["sanitize.node"] = `"mondrian"`
	}
	if len(rep.Model.LDiversity) > 0 {
		want["sanitize.l_diversity"] = string(rep.Model.LDiversity)
	}
	if len(rep.Model.TCloseness) > 0 {
		want["sanitize.t_closeness"] = string(rep.Model.TCloseness)
	}
	return want
}

// checkMetadata checks the sanitize.* key-value metadata: exactly the keys the report
// implies, each equal to the report's value (numbers as numbers, JSON as decoded), and
// k the configuration's.
func (s *subject) checkMetadata(ctx context.Context) error {
	kv, err := s.metadata(ctx)
	if err != nil {
		return err
	}
	want := s.wantMetadata()
	var errs []error
	for key, w := range want {
		got, ok := kv[key]
		if !ok {
			errs = append(errs, fmt.Errorf("%w: %s missing", errMetadata, key))
		} else if !sameValue(got, w) {
			errs = append(errs, fmt.Errorf("%w: %s is %q, the report says %q", errMetadata, key, got, w))
		}
	}
	for key := range kv {
		if _, ok := want[key]; !ok && strings.HasPrefix(key, "sanitize.") {
			errs = append(errs, fmt.Errorf("%w: unexpected key %s", errMetadata, key))
		}
	}
	if s.rep.Model.K != s.r.K {
		errs = append(errs, fmt.Errorf("%w: the report's k is %d, the configuration's %d", errMetadata, s.rep.Model.K, s.r.K))
	}
	return errors.Join(errs...)
}

// sameValue compares a metadata value with the report's: equal as text, as numbers
// or as decoded JSON.
func sameValue(got, want string) bool {
	if got == want {
		return true
	}
	g, errG := strconv.ParseFloat(got, 64)
	w, errW := strconv.ParseFloat(want, 64)
	if errG == nil && errW == nil {
		return g == w
	}
	var gj, wj any
	return json.Unmarshal([]byte(got), &gj) == nil && json.Unmarshal([]byte(want), &wj) == nil && reflect.DeepEqual(gj, wj)
}

// minLeakLength is the length below which an input value is not looked for in the
// metadata: shorter values (a sex, a small number) occur in any text by chance.
const minLeakLength = 4

// checkLeaks checks that no key or value of the key-value metadata (the Arrow schema
// decoded too) contains a value of an identifier or sensitive column of the input.
func (s *subject) checkLeaks(ctx context.Context) error {
	kv, err := s.metadata(ctx)
	if err != nil {
		return err
	}
	var texts []string
	for k, v := range kv {
		texts = append(texts, k, v)
		if raw, err := base64.StdEncoding.DecodeString(v); err == nil {
			texts = append(texts, string(raw))
		}
	}
	var errs []error
	for _, c := range s.r.Columns {
		if c.Role != "identifier" && c.Role != "sensitive" {
			continue
		}
		q := fmt.Sprintf("SELECT DISTINCT CAST(%s AS VARCHAR) AS v FROM %s WHERE length(v) >= %d", ident(c.Name), s.in, minLeakLength)
		vals, err := queryStrings(ctx, s.db, q)
		if err != nil {
			return err
		}
		for _, v := range vals {
			for _, text := range texts {
				if strings.Contains(text, v[0]) {
					errs = append(errs, fmt.Errorf("%w: a value of %s", errLeak, c.Name))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// quasiList is the quasi-identifiers as a SQL column list.
func (s *subject) quasiList() string { return strings.Join(s.quasi, ", ") }

// checkCounts recounts the release with SQL: its records (the report's output rows;
// with the suppressed ones, the input's), no class below k (GROUP BY every
// quasi-identifier, HAVING count(*) < k), and as many classes as the report says,
// the smallest of the report's size.
func (s *subject) checkCounts(ctx context.Context) error {
	rows, err := queryInt(ctx, s.db, "SELECT count(*) FROM "+s.file)
	if err != nil {
		return err
	}
	input, err := queryInt(ctx, s.db, "SELECT count(*) FROM "+s.in)
	if err != nil {
		return err
	}
	var errs []error
	if int(rows) != s.rep.Output.Rows || int(rows)+s.rep.Suppressed != int(input) {
		errs = append(errs, fmt.Errorf("%w: %d records, the report says %d of %d with %d suppressed", errRows, rows, s.rep.Output.Rows, input, s.rep.Suppressed))
	}
	classes := "SELECT " + s.quasiList() + ", count(*) AS n FROM " + s.file + " GROUP BY ALL"
	below, err := queryInt(ctx, s.db, "SELECT count(*) FROM ("+classes+" HAVING n < ?)", s.r.K)
	if err != nil {
		return err
	}
	if below > 0 {
		errs = append(errs, fmt.Errorf("%w: %d classes have fewer than %d records", errBelowK, below, s.r.K))
	}
	var n, smallest sql.NullInt64
	if err := s.db.QueryRowContext(ctx, "SELECT count(*), min(n) FROM ("+classes+")").Scan(&n, &smallest); err != nil {
		return err
	}
	if int(n.Int64) != s.rep.Classes || int(smallest.Int64) != s.rep.MinClass {
		errs = append(errs, fmt.Errorf("%w: %d classes, the smallest of %d; the report says %d, %d", errClasses, n.Int64, smallest.Int64, s.rep.Classes, s.rep.MinClass))
	}
	return errors.Join(errs...)
}

// diversityHaving is the SQL condition under which a class (a group of the release
// by its quasi-identifiers) fails an l-diversity requirement, or "" for a variant
// not expressed in SQL (recursive).
func diversityHaving(l lRequirement) string {
	s := ident(l.Column)
	switch l.Variant {
	case "distinct":
		return fmt.Sprintf("count(DISTINCT %s) < %g", s, l.L)
	case "entropy": // DuckDB's entropy is in bits
		return fmt.Sprintf("entropy(%s) < log2(%g) - 1e-9", s, l.L)
	default:
		return ""
	}
}

// checkDiversity checks every distinct or entropy l-diversity requirement per class.
func (s *subject) checkDiversity(ctx context.Context) error {
	var errs []error
	for _, l := range s.r.LDiversity {
		having := diversityHaving(l)
		if having == "" {
			continue
		}
		q := "SELECT count(*) FROM (SELECT " + s.quasiList() + " FROM " + s.file + " GROUP BY ALL HAVING " + having + ")"
		n, err := queryInt(ctx, s.db, q)
		if err != nil {
			return err
		}
		if n > 0 {
			errs = append(errs, fmt.Errorf("%w: %d classes fail %s l-diversity with l = %g on %s", errDiversity, n, l.Variant, l.L, l.Column))
		}
	}
	return errors.Join(errs...)
}

// checkCloseness checks every t-closeness requirement with the equal ground distance:
// per class, EMD = ½ Σ_v |p_class(v) − p_input(v)| ≤ t, computed as
// ½ (1 + Σ_{v in the class} (|p_class(v) − p_input(v)| − p_input(v))), the input's
// distribution taken over all its records. Ordered and hierarchical distances are left
// to the pipeline's own verifier.
func (s *subject) checkCloseness(ctx context.Context) error {
	var errs []error
	for _, t := range s.r.TCloseness {
		if t.Distance != "equal" {
			continue
		}
		v, qs := ident(t.Column), s.quasiList()
		q := "WITH p AS (SELECT " + v + " AS v, count(*) / sum(count(*)) OVER () AS p FROM " + s.in + " GROUP BY " + v + ")," +
			" c AS (SELECT " + qs + ", " + v + " AS v, count(*) AS n FROM " + s.file + " GROUP BY " + qs + ", " + v + ")," +
			" sized AS (SELECT *, sum(n) OVER (PARTITION BY " + qs + ") AS size FROM c)," +
			" emd AS (SELECT " + qs + ", 0.5 * (1 + sum(abs(n / size - p) - p)) AS d FROM sized JOIN p USING (v) GROUP BY " + qs + ")" +
			" SELECT count(*) FILTER (d > ? + 1e-9) FROM emd"
		n, err := queryInt(ctx, s.db, q, t.T)
		if err != nil {
			return err
		}
		if n > 0 {
			errs = append(errs, fmt.Errorf("%w: %d classes exceed t = %g on %s (equal distance)", errCloseness, n, t.T, t.Column))
		}
	}
	return errors.Join(errs...)
}

// checkKept checks that every column kept as is (sensitive and insensitive) holds
// the input's values, read as the release's type: no value occurs in the release more
// often than in the input (nulls included). A timestamp keeps its instant; the
// database's time zone is UTC (openDuckDB), as the pipeline reads a timestamp without
// a zone.
func (s *subject) checkKept(ctx context.Context) error {
	names, types, err := s.describe(ctx, s.file)
	if err != nil {
		return err
	}
	var errs []error
	for i, name := range names {
		c := s.column(name)
		if c == nil || c.Role == "quasi" {
			continue
		}
		v, typ := ident(name), types[i]
		q := "WITH r AS (SELECT CAST(" + v + " AS " + typ + ") AS v, count(*) AS n FROM " + s.file + " GROUP BY ALL)," +
			" i AS (SELECT CAST(" + v + " AS " + typ + ") AS v, count(*) AS n FROM " + s.in + " GROUP BY ALL)" +
			" SELECT count(*) FROM r LEFT JOIN i ON r.v IS NOT DISTINCT FROM i.v WHERE i.n IS NULL OR r.n > i.n"
		n, err := queryInt(ctx, s.db, q)
		if err != nil {
			return err
		}
		if n > 0 {
			errs = append(errs, fmt.Errorf("%w: %s: %d values", errKept, name, n))
		}
	}
	return errors.Join(errs...)
}
