package report

import (
	"fmt"
	"io"

	"sanitizer/schema"
	"sanitizer/verify"
)

// CheckSummary is check's summary of what it measured on a release (m) against the
// configuration's requirements: k, the suppression, the utility and, per protected
// sensitive column, its weakest class.
func CheckSummary(w io.Writer, cfg *schema.Config, m *verify.Measured) {
	fmt.Fprintf(w, "measured k=%d (required %d): %d classes, %d records released, %d of %d suppressed (limit %g)\n",
		m.MinClass, cfg.Privacy.K, m.Classes, m.Rows, m.Suppressed, m.Rows+m.Suppressed, cfg.Privacy.Suppression)
	if m.Utility {
		fmt.Fprintf(w, "measured utility: loss %.4f, NCP %.4f, non-uniform entropy %.6g bits, discernibility %.6g, C_AVG %.2f\n",
			m.Loss, m.NCP, m.NonUniformEntropy, m.Discernibility, m.CAvg)
	} else {
		fmt.Fprintf(w, "measured utility: discernibility %.6g, C_AVG %.2f (loss, NCP and non-uniform entropy: not measured, the release failed the check first)\n",
			m.Discernibility, m.CAvg)
	}
	for _, s := range m.Sensitive {
		fmt.Fprintf(w, "measured on %s: distinct l=%d, entropy l=%.2f, largest %s EMD %.4f, largest β-likeness gain %.4g\n", s.Column, s.MinDistinct, s.MinEntropyL, s.Distance, s.MaxEMD, s.MaxGain)
	}
	releasedSummary(w, ReleasedColumns(cfg, m))
}
