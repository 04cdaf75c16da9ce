package report

import (
	"fmt"
	"io"

	"sanitizer/schema"
	"sanitizer/verify"
)

// CheckSummary is check's summary of what it measured on a release (m) against the
// configuration's requirements: k, the suppression, the utility and, per protected
// sensitive column, its weakest class (the measures its models require:
// ConfiguredMeasures).
func CheckSummary(w io.Writer, cfg *schema.Config, m *verify.Measured) {
	if p := m.Persons; p != nil {
		fmt.Fprintf(w, "measured k=%d in persons (required %d): %d classes, %d records of %d persons released, %d of %d records suppressed (limit %g); %d persons with records in several classes, %d lost some of their records, %d all\n",
			p.MinClass, cfg.Privacy.K, m.Classes, m.Rows, p.Released, m.Suppressed, m.Rows+m.Suppressed, cfg.Privacy.Suppression, p.InSeveralClasses, p.LostSome, p.LostAll)
	} else if d := cfg.Privacy.DifferentialPrivacy; d != nil {
		fmt.Fprintf(w, "measured k=%d (required %d, SafePub's for ε=%g, δ=%g): %d classes, %d records released, %d of %d left out (not drawn, or in a class of fewer than k drawn records; the sample is not known to the check)\n",
			m.MinClass, m.RequiredK, d.Epsilon, d.Delta, m.Classes, m.Rows, m.Suppressed, m.Rows+m.Suppressed)
	} else {
		fmt.Fprintf(w, "measured k=%d (required %d): %d classes, %d records released, %d of %d suppressed (limit %g)\n",
			m.MinClass, cfg.Privacy.K, m.Classes, m.Rows, m.Suppressed, m.Rows+m.Suppressed, cfg.Privacy.Suppression)
	}
	if m.Utility {
		fmt.Fprintf(w, "measured utility: loss %.4f, NCP %.4f, non-uniform entropy %.6g bits, discernibility %.6g, C_AVG %.2f\n",
			m.Loss, m.NCP, m.NonUniformEntropy, m.Discernibility, m.CAvg)
	} else {
		fmt.Fprintf(w, "measured utility: discernibility %.6g, C_AVG %.2f (loss, NCP and non-uniform entropy: not measured, the release failed the check first)\n",
			m.Discernibility, m.CAvg)
	}
	for _, s := range m.Sensitive {
		sum := SensitiveSummary{Column: s.Column, MinDistinct: s.MinDistinct, MinEntropyL: s.MinEntropyL,
			MaxEMD: s.MaxEMD, Distance: s.Distance, MaxGain: s.MaxGain, Measures: ConfiguredMeasures(cfg, s.Column)}
		if m.Persons != nil {
			for _, ps := range m.Persons.Sensitive {
				if ps.Column == s.Column { // the models' figures in persons
					sum.MinPersonsL, sum.MaxEMD, sum.MaxGain = ps.MinL, ps.MaxEMD, ps.MaxGain
				}
			}
		}
		fmt.Fprint(w, sensitiveLine("measured on "+s.Column+": ", sum))
	}
	releasedSummary(w, ReleasedColumns(cfg, m))
}
