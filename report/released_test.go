package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sanitizer/schema"
	"sanitizer/verify"
)

// TestReleasedColumnsShown: a column released as it is that gives a sensitive value
// away is named, with its figures, in the stdout summary, check's summary, the HTML
// page (as a check that fails) and the JSON report; a column that does not is
// measured without a warning.
func TestReleasedColumnsShown(t *testing.T) {
	m := &verify.Measured{Rows: 1000, Released: []verify.ReleasedMeasured{
		{Column: "ward", Sensitive: "diagnosis", Groups: 42, FailingGroups: 21, Records: 206},
		{Column: "insurance", Sensitive: "diagnosis", Groups: 4},
	}}
	for _, check := range []schema.ReleasedCheck{schema.ReleasedWarn, schema.ReleasedError} {
		cfg := &schema.Config{Privacy: schema.Privacy{K: 5, ReleasedColumns: check}}
		cols := ReleasedColumns(cfg, m)
		if len(cols) != 2 || !cols[0].Discloses() || cols[1].Discloses() || cols[0].Share != 0.206 || cols[0].Refused != (check == schema.ReleasedError) || cols[1].Refused {
			t.Fatalf("%s: %+v", check, cols)
		}
	}
	cfg := &schema.Config{Privacy: schema.Privacy{K: 5}}
	r := adultReport(false)
	r.Verified.Released = ReleasedColumns(cfg, m)

	var sum, chk, page bytes.Buffer
	r.Summary(&sum)
	CheckSummary(&chk, cfg, m)
	for name, out := range map[string]string{"summary": sum.String(), "check": chk.String()} {
		if !strings.Contains(out, "warning: column ward, released as it is, gives diagnosis away: 21 of its 42 values") || !strings.Contains(out, "20.6% of the released records") {
			t.Errorf("%s does not name ward:\n%s", name, out)
		}
		if strings.Contains(out, "column insurance") {
			t.Errorf("%s warns about insurance:\n%s", name, out)
		}
	}
	if err := WriteReleaseHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"released as it is, against", "21 of its 42 values fail, holding 20.6% of the records", "all 4 values meet them"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML page lacks %q", want)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Verified struct {
			Released []ReleasedColumn `json:"released_columns"`
		}
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Verified.Released) != 2 || back.Verified.Released[0].FailingValues != 21 {
		t.Fatalf("JSON: %v %+v", err, back)
	}

	// Nothing gives a value away: one line, no warning.
	sum.Reset()
	r.Verified.Released = r.Verified.Released[1:]
	r.Summary(&sum)
	if strings.Contains(sum.String(), "warning") || !strings.Contains(sum.String(), "none gives a protected sensitive value away (1 measured") {
		t.Errorf("summary:\n%s", sum.String())
	}
}
