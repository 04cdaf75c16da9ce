package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDPReleaseReadByDuckDB releases Adult under privacy.differential-privacy as Parquet
// through the main module and reads it with DuckDB: every column a dictionary-encoded
// string, as many records as the report says, every class (records alike in every
// column) of at least the report's k records, and the records in the order of their
// values, which DuckDB's own ORDER BY gives back unchanged.
func TestDPReleaseReadByDuckDB(t *testing.T) {
	r := releaseParquet(t, "testdata/adult-dp.yaml", adultCSV(t))
	data, err := os.ReadFile(r.Report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Output struct {
			Rows int `json:"rows"`
		} `json:"output"`
		DP *struct {
			K int `json:"k"`
		} `json:"differential_privacy"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.DP == nil || rep.DP.K < 2 {
		t.Fatalf("the report's differential privacy: %v (%s)", err, data)
	}
	ctx, db := context.Background(), openDuckDB(t)
	var cols []string
	for _, c := range r.Columns {
		cols = append(cols, ident(c.Name))
	}
	all := strings.Join(cols, ", ")
	file := parquet(r.Output)
	if n, err := queryInt(ctx, db, "SELECT count(*) FROM "+file); err != nil || int(n) != rep.Output.Rows || n == 0 {
		t.Errorf("DuckDB counts %d records (%v), the report %d", n, err, rep.Output.Rows)
	}
	if n, err := queryInt(ctx, db, "SELECT count(*) FROM (SELECT count(*) AS n FROM "+file+" GROUP BY ALL HAVING n < ?)", rep.DP.K); err != nil || n != 0 {
		t.Errorf("%d classes below k = %d (%v)", n, rep.DP.K, err)
	}
	// Row numbers as read against row numbers once sorted by every column.
	unordered, err := queryInt(ctx, db, fmt.Sprintf(
		"SELECT count(*) FROM (SELECT row_number() OVER () AS read_at, row_number() OVER (ORDER BY %s) AS sorted_at FROM (SELECT * FROM %s)) WHERE read_at <> sorted_at", all, file))
	if err != nil || unordered != 0 {
		t.Errorf("%d records out of the order of their values (%v)", unordered, err)
	}
	rows, err := db.QueryContext(ctx, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "+file+")")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		if typ != "VARCHAR" {
			t.Errorf("column %s is %s, want VARCHAR (a generalized label)", name, typ)
		}
	}
	enc, err := queryInt(ctx, db, "SELECT count(*) FROM parquet_metadata("+literal(r.Output)+") WHERE encodings NOT LIKE '%DICTIONARY%'")
	if err != nil || enc != 0 {
		t.Errorf("%d column chunks without a dictionary (%v)", enc, err)
	}
}
