package interop

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// checkValues checks that every value of every quasi-identifier is one the recoder
// could write: at the reported level (an optimal release) or any level (Mondrian) of
// its hierarchy, applied to the input's values, or for Mondrian a range [lo,hi] of two
// input values of a numeric column.
func (s *subject) checkValues(ctx context.Context) error {
	levels, err := s.rep.levels()
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range s.r.Columns {
		if c.Role != "quasi" {
			continue
		}
		level, ok := levels[c.Name]
		if s.rep.Algorithm == "mondrian" {
			level, ok = anyLevel, true
		}
		if !ok {
			errs = append(errs, fmt.Errorf("%w: %s has no level in the report's node", errUnwritable, c.Name))
			continue
		}
		cand := candidates(c, level, s.in)
		if cand == "" {
			continue // a level not expressed in SQL (float intervals)
		}
		bad, err := s.unwritable(ctx, c, cand)
		if err != nil {
			return err
		}
		if len(bad) > 0 {
			errs = append(errs, fmt.Errorf("%w: %s: %q", errUnwritable, c.Name, bad))
		}
	}
	return errors.Join(errs...)
}

// unwritable returns (up to five of) the values of quasi-identifier c in the release
// that the candidate query cand does not yield (nor, for a Mondrian numeric column, a
// range).
func (s *subject) unwritable(ctx context.Context, c column, cand string) ([]string, error) {
	q := ident(c.Name)
	rng := "false"
	if s.rep.Algorithm == "mondrian" && (c.Type == "integer" || c.Type == "date") {
		typ := map[string]string{"integer": "BIGINT", "date": "DATE"}[c.Type]
		leaves := "SELECT CAST(" + q + " AS VARCHAR) FROM " + s.in
		lo, hi := `regexp_extract(v, '^\[([^,]+),', 1)`, `regexp_extract(v, ',([^,]+)\]$', 1)`
		rng = `regexp_matches(v, '^\[[^,]+,[^,]+\]$') AND ` + lo + " IN (" + leaves + ") AND " + hi + " IN (" + leaves + ")" +
			" AND TRY_CAST(" + lo + " AS " + typ + ") <= TRY_CAST(" + hi + " AS " + typ + ")"
	}
	query := "WITH vals AS (SELECT DISTINCT CAST(" + q + " AS VARCHAR) AS v FROM " + s.file + ")," +
		" cand AS (" + cand + ")" +
		" SELECT v FROM vals WHERE v NOT IN (SELECT x FROM cand WHERE x IS NOT NULL) AND NOT (" + rng + ") ORDER BY v LIMIT 5"
	rows, err := queryStrings(ctx, s.db, query)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, r := range rows {
		bad = append(bad, r[0])
	}
	return bad, nil
}

// anyLevel asks candidates for the values of every level of a hierarchy.
const anyLevel = -1

// builtHeight is the number of levels of a built hierarchy, leaves and top included.
func builtHeight(h hierarchy) int {
	switch {
	case h.Mask != nil:
		return h.Mask.Max + 2
	case len(h.Intervals) > 0:
		return len(h.Intervals) + 2
	default:
		return len(h.Date) + 2
	}
}

// candidates is a SQL query whose column x holds every value the recoder may write for
// quasi-identifier c at level l of its hierarchy (every level for anyLevel), given the
// input relation in; "" when a level is not expressed in SQL.
func candidates(c column, l int, in string) string {
	h := c.Hierarchy
	if h.File != "" {
		return fileLevel(h.File, l)
	}
	if l == anyLevel {
		var all []string
		for l := range builtHeight(h) {
			q := candidates(c, l, in)
			if q == "" {
				return ""
			}
			all = append(all, q)
		}
		return strings.Join(all, " UNION ")
	}
	v := "CAST(" + ident(c.Name) + " AS VARCHAR)"
	switch {
	case l == 0:
		return "SELECT DISTINCT " + v + " AS x FROM " + in
	case l == builtHeight(h)-1:
		return "SELECT '*' AS x"
	case h.Mask != nil:
		return "SELECT DISTINCT " + maskExpr(v, l, h.Mask.FromRight) + " AS x FROM " + in
	case len(h.Intervals) > 0 && c.Type == "integer":
		w := int64(h.Intervals[l-1])
		lo := fmt.Sprintf("(CAST(floor(CAST(%s AS BIGINT) / %d) AS BIGINT) * %d)", ident(c.Name), w, w)
		return fmt.Sprintf("SELECT DISTINCT '[' || %s || ',' || (%s + %d) || ']' AS x FROM %s", lo, lo, w-1, in)
	case len(h.Date) > 0:
		return "SELECT DISTINCT " + dateExpr("CAST("+ident(c.Name)+" AS DATE)", h.Date[l-1]) + " AS x FROM " + in
	default:
		return ""
	}
}

// fileLevel is the query of the labels at level l (every label for anyLevel) of an ARX
// hierarchy file, split by this test itself: one row per line, ';' between levels,
// no quoting.
func fileLevel(path string, l int) string {
	lines := "SELECT rtrim(unnest(string_split(content, chr(10))), chr(13)) AS line FROM read_text(" + literal(path) + ")"
	if l == anyLevel {
		return "SELECT unnest(string_split(line, ';')) AS x FROM (" + lines + ") WHERE line <> ''"
	}
	return fmt.Sprintf("SELECT string_split(line, ';')[%d] AS x FROM (%s) WHERE line <> ''", l+1, lines)
}

// maskExpr is the SQL of a masking hierarchy's level l applied to the text v.
func maskExpr(v string, l int, fromRight bool) string {
	kept := fmt.Sprintf("left(%s, length(%s) - %d)", v, v, l)
	masked := kept + fmt.Sprintf(" || repeat('*', %d)", l)
	if !fromRight {
		masked = fmt.Sprintf("repeat('*', %d) || right(%s, length(%s) - %d)", l, v, v, l)
	}
	return fmt.Sprintf("CASE WHEN length(%s) <= %d THEN repeat('*', length(%s)) ELSE %s END", v, l, v, masked)
}

// dateExpr is the SQL of a date hierarchy level applied to the date d.
func dateExpr(d, level string) string {
	switch level {
	case "month":
		return "strftime(" + d + ", '%Y-%m')"
	case "quarter":
		return "strftime(" + d + ", '%Y') || '-Q' || quarter(" + d + ")"
	case "year":
		return "strftime(" + d + ", '%Y')"
	default: // decade
		lo := "(year(" + d + ") - year(" + d + ") % 10)"
		return "'[' || " + lo + " || ',' || (" + lo + " + 9) || ']'"
	}
}
