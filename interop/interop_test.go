package interop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repo is the main module's folder, adultDir the shared Adult data beside it.
const (
	repo     = ".."
	adultDir = "../../shared/data/adult"
)

// releaseCase is one release of the suite: a configuration, the input it releases, and
// what else the case is there to show.
type releaseCase struct {
	name   string
	config string
	input  func(t *testing.T) string
	// suppresses says the case exists to exercise suppression: its release must
	// leave records out.
	suppresses bool
}

// The releases with l-diversity and t-closeness, which negative_test.go rewrites too.
var (
	lDiversityCase = releaseCase{name: "distinct l-diversity", config: "testdata/hospital-ldiversity.yaml", input: hospitalCSV}
	tClosenessCase = releaseCase{name: "t-closeness", config: "testdata/hospital-tcloseness.yaml", input: hospitalCSV}
	adultCase      = releaseCase{name: "adult entropy l-diversity", config: "testdata/adult.yaml", input: adultCSV}
)

// releaseCases are the Parquet releases every check runs on.
var releaseCases = []releaseCase{
	{name: "hospital csv", config: repo + "/testdata/hospital-tests.yaml", input: hospitalCSV, suppresses: true},
	{name: "hospital-8qi parquet", config: repo + "/testdata/hospital-8qi.yaml", input: generated, suppresses: true},
	{name: "hospital mondrian", config: repo + "/testdata/hospital-mondrian.yaml", input: hospitalCSV},
	{name: "hospital-8qi mondrian parquet", config: repo + "/testdata/hospital-8qi-mondrian.yaml", input: generated},
	lDiversityCase,
	tClosenessCase,
	{name: "column types parquet", config: "testdata/types.yaml", input: typedInput},
	adultCase,
}

// TestReleasesReadByDuckDB releases every case as Parquet through the main module and
// reads the release with DuckDB: columns and types, dictionary encoding, sanitize.*
// metadata against the JSON report, no input value in the metadata, and the records,
// classes, l-diversity, t-closeness and values recounted with SQL.
func TestReleasesReadByDuckDB(t *testing.T) {
	for _, tc := range releaseCases {
		t.Run(tc.name, func(t *testing.T) {
			r := releaseParquet(t, tc.config, tc.input(t))
			if err := checkRelease(context.Background(), openDuckDB(t), r, r.Output); err != nil {
				t.Errorf("DuckDB finds the release at fault:\n%v", err)
			}
			rep, err := readReport(r.Report)
			if err != nil {
				t.Fatal(err)
			}
			if tc.suppresses && rep.Suppressed == 0 {
				t.Errorf("the case is there for suppression, but the release suppressed nothing")
			}
		})
	}
}

// hospitalCSV is the bundled hospital sample.
func hospitalCSV(*testing.T) string { return repo + "/testdata/hospital.csv" }

// adultCSV is the shared Adult table; it skips t when the data is absent.
func adultCSV(t *testing.T) string {
	path := filepath.Join(adultDir, "adult.csv")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("Adult data not available: %v", err)
	}
	return path
}

// generatedRows is the size of the generated Parquet input.
const generatedRows = 50_000

var generatedOnce struct {
	sync.Once
	path string
	dir  string
}

// generated is the main module's synthetic hospital table of generatedRows records as
// Parquet, generated once per test binary (removed by TestMain).
func generated(t *testing.T) string {
	generatedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "interop-gen-")
		if err != nil {
			t.Fatal(err)
		}
		generatedOnce.dir = dir
		path := filepath.Join(dir, "hospital.parquet")
		generateHospital(t, path, generatedRows, 1)
		generatedOnce.path = path
	})
	if generatedOnce.path == "" {
		t.Fatal("the generated input could not be made")
	}
	return generatedOnce.path
}

// TestMain removes the generated input after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if generatedOnce.dir != "" {
		os.RemoveAll(generatedOnce.dir)
	}
	os.Exit(code)
}

// typedInput writes, with DuckDB, a Parquet version of the hospital sample with
// insensitive columns of many types (testdata/types.yaml): every integer width signed
// and unsigned, FLOAT, DOUBLE, BOOLEAN, DATE, TIMESTAMP in seconds, milliseconds,
// microseconds and nanoseconds and with a time zone (stay_days as sd), and text, with nulls.
func typedInput(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "types.parquet")
	nullable := func(expr string) string { return "CASE WHEN sd % 7 = 3 THEN NULL ELSE " + expr + " END" }
	cols := []string{
		"patient_id", "CAST(age AS SMALLINT) AS age", "sex", "zip", "CAST(admitted AS DATE) AS admitted", "diagnosis",
		nullable("CAST(sd - 30 AS TINYINT)") + " AS i8",
		nullable("CAST(sd * -300 AS SMALLINT)") + " AS i16",
		nullable("CAST(sd * -70000 AS INTEGER)") + " AS i32",
		nullable("CAST(sd * -5000000000 AS BIGINT)") + " AS i64",
		nullable("CAST(sd + 180 AS UTINYINT)") + " AS u8",
		nullable("CAST(sd * 900 AS USMALLINT)") + " AS u16",
		nullable("CAST(sd * 60000000 AS UINTEGER)") + " AS u32",
		nullable("CAST(sd AS UBIGINT) * 200000000000000000") + " AS u64",
		nullable("CAST(sd / 3 AS FLOAT)") + " AS f32",
		nullable("CAST(sd / 7 AS DOUBLE)") + " AS f64",
		nullable("sd > 7") + " AS flag",
		nullable("CAST(admitted AS DATE) + CAST(sd AS INTEGER)") + " AS day",
		nullable("CAST(admitted AS TIMESTAMP) + to_minutes(sd * 97)") + " AS ts",
		nullable("CAST(CAST(admitted AS TIMESTAMP) AS TIMESTAMP_S)") + " AS ts_s",
		nullable("CAST(CAST(admitted AS TIMESTAMP) + to_milliseconds(sd * 1234567) AS TIMESTAMP_MS)") + " AS ts_ms",
		nullable("CAST(CAST(admitted AS TIMESTAMP) AS TIMESTAMP_NS)") + " AS ts_ns",
		nullable("CAST(CAST(admitted AS TIMESTAMP) AS TIMESTAMPTZ)") + " AS tstz",
		nullable("ward") + " AS note",
	}
	q := "COPY (SELECT " + strings.Join(cols, ", ") + " FROM (SELECT *, CAST(stay_days AS BIGINT) AS sd FROM read_csv(" + literal(hospitalCSV(t)) + ", all_varchar=true))) TO " + literal(path) + " (FORMAT parquet)"
	if _, err := openDuckDB(t).Exec(q); err != nil {
		t.Fatalf("writing the typed input: %v", err)
	}
	return path
}
