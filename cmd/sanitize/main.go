// Command sanitize turns a sensitive table into a file that can be published: it
// generalizes quasi-identifiers until k-anonymity holds, verifies the written release
// independently, and reports what it did.
//
// Exit status: 0 done; 2 bad input or configuration; 3 the privacy model cannot be
// met within the suppression limit (nothing written); 1 any other failure.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"sanitizer/internal/safe"
	"sanitizer/pipeline"
	"sanitizer/schema"
)

func main() {
	// The encoded table lives through the whole run while the search and the passes
	// make short-lived garbage: collecting at half the live heap, not the whole of it,
	// keeps the peak near what the codes need (10M records, 8 quasi-identifiers: 407 MB
	// instead of 586 MB; BENCHMARKS.md). GOGC in the environment overrides it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globals{stderr: stderr}
	root := newRoot(stdout, g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Cobra validates the command, the flags and the arguments before the persistent
	// pre-run; an error before it is a command-line mistake (exit 2).
	started := false
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		started = true
		return g.setup()
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := 2
	if started {
		code = exitCode(err)
	}
	logStack(g.log, err)
	if g.log != nil && g.logFormat == "json" {
		g.log.Error(err.Error(), "exit", code)
	} else {
		fmt.Fprintln(stderr, "sanitize:", err)
	}
	return code
}

// globals are the flags every command takes, and what they set up.
type globals struct {
	stderr    io.Writer
	quiet     bool
	logFormat string
	log       *slog.Logger
}

// setup makes the logger: text on stderr with warnings and errors only (none with
// --quiet), or JSON records of every stage for unattended jobs.
func (g *globals) setup() error {
	level := slog.LevelWarn
	if g.quiet {
		level = slog.LevelError
	}
	switch g.logFormat {
	case "text":
		g.log = slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
	case "json":
		if !g.quiet {
			level = slog.LevelInfo
		}
		g.log = slog.New(slog.NewJSONHandler(g.stderr, &slog.HandlerOptions{Level: level}))
	default:
		return usageError{fmt.Errorf("--log-format: %q is not one of text, json", g.logFormat)}
	}
	return nil
}

// terminal reports whether w is a terminal (a character device).
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// showProgress prints the run's progress on one line of stderr every half second while
// the returned function has not been called; only when stderr is a terminal and logs
// are text.
func (g *globals) showProgress(p *pipeline.Progress) (stop func()) {
	if !terminal(g.stderr) || g.logFormat != "text" {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(g.stderr, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(g.stderr, "\r\033[K%s: %d records read, %d nodes evaluated, %d records written",
					p.Stage(), p.Read.Load(), p.Evaluated.Load(), p.Written.Load())
			}
		}
	}()
	return func() { close(done); <-finished }
}

// usageError marks a command-line mistake (exit 2).
type usageError struct{ error }

func (e usageError) Is(target error) bool { return target == schema.ErrBadInput }

func exitCode(err error) int {
	switch {
	case errors.Is(err, safe.ErrInternal):
		return 1
	case errors.Is(err, schema.ErrBadInput):
		return 2
	case errors.Is(err, schema.ErrUnattainable):
		return 3
	}
	return 1
}

func newRoot(stdout io.Writer, g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "sanitize",
		Short:         "Generalize, suppress and verify a sensitive table for publication",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "print errors only (no warnings)")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "text (warnings and errors) or json (a record per stage, for unattended jobs)")
	root.AddCommand(newRelease(stdout, g), newCheck(stdout), newDP(stdout, g), newGen(stdout))
	return root
}

func newRelease(stdout io.Writer, g *globals) *cobra.Command {
	var cfgPath string
	var opt pipeline.Options
	cmd := &cobra.Command{
		Use:   "release -c CONFIG --in INPUT --out RELEASE [--report REPORT.json]",
		Short: "Write a k-anonymous, verified release of INPUT",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.Workers < 0 || opt.Workers > maxWorkers {
				return usageError{fmt.Errorf("--workers: must be between 0 (one per CPU) and %d", maxWorkers)}
			}
			cfg, err := loadConfig(cfgPath)
			if err != nil {
				return err
			}
			opt.Log = g.log
			opt.Progress = &pipeline.Progress{}
			stop := g.showProgress(opt.Progress)
			rep, err := pipeline.Release(cmd.Context(), cfg, opt)
			stop()
			if err != nil {
				return err
			}
			rep.Summary(stdout)
			if opt.Report != "" {
				fmt.Fprintf(stdout, "report: %s\n", opt.Report)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "", "release configuration (YAML, required)")
	cmd.Flags().StringVar(&opt.Input, "in", "", "input table (overrides input.path)")
	cmd.Flags().StringVar(&opt.Output, "out", "", "release file to write (overrides output.path)")
	cmd.Flags().StringVar(&opt.Report, "report", "", "write a JSON report here")
	cmd.Flags().IntVar(&opt.Workers, "workers", 0, "parallel workers (default: number of CPUs)")
	return cmd
}

func newDP(stdout io.Writer, g *globals) *cobra.Command {
	var cfgPath string
	var opt pipeline.Options
	cmd := &cobra.Command{
		Use:   "dp -c CONFIG --in INPUT --out DIR [--ledger LEDGER.json]",
		Short: "Write the configuration's differentially private outputs of INPUT into DIR",
		Long: "Write every output of the configuration's dp section into DIR (a new or empty folder), with manifest.json.\n" +
			"With --ledger, the run's ε and δ are recorded in the ledger before the outputs are moved into place,\n" +
			"and a run that would take the dataset past its totals is refused (exit 3, nothing written).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := required("out", opt.Output); err != nil {
				return err
			}
			cfg, err := loadConfig(cfgPath)
			if err != nil {
				return err
			}
			opt.Log = g.log
			man, err := pipeline.DP(cmd.Context(), cfg, opt)
			if err != nil {
				return err
			}
			for _, o := range man.Outputs {
				if s := o.Synthetic; s != nil {
					fmt.Fprintf(stdout, "%s: synthetic, %d records, %s ε=%g δ=%g (zCDP ρ %.4g, %d rounds, %d marginals measured, model of %d cells)\n",
						o.File, s.Rows, s.Method, o.Epsilon, o.Delta, s.Rho, s.Rounds, len(s.Measured), s.ModelSize)
					continue
				}
				fmt.Fprintf(stdout, "%s: %s, %d cells, %s ε=%g δ=%g, 95%% half-width %s\n", o.File, o.Kind, o.Cells, o.Mechanism, o.Epsilon, o.Delta, halfWidth(o))
			}
			fmt.Fprintf(stdout, "spent ε=%g δ=%g", man.Epsilon, man.Delta)
			if l := man.Ledger; l != nil {
				fmt.Fprintf(stdout, "; dataset %q has spent ε=%g of %g, δ=%g of %g", man.Dataset, l.EpsilonSpent, l.EpsilonTotal, l.DeltaSpent, l.DeltaTotal)
			}
			fmt.Fprintf(stdout, "\nmanifest: %s\n", filepath.Join(opt.Output, "manifest.json"))
			return nil
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "", "configuration with a dp section (YAML, required)")
	cmd.Flags().StringVar(&opt.Input, "in", "", "input table (overrides input.path)")
	cmd.Flags().StringVar(&opt.Output, "out", "", "folder to write the outputs into (must not exist, or be empty)")
	cmd.Flags().StringVar(&opt.Ledger, "ledger", "", "budget ledger (JSON) to charge; created if missing")
	return cmd
}

// halfWidth is an output's 95% half-width as text, per statistic for aggregates.
func halfWidth(o pipeline.ManifestOutput) string {
	if o.Kind != "aggregate" {
		return fmt.Sprintf("%.3g", o.HalfWidth95)
	}
	var parts []string
	for _, s := range o.Stats {
		if s.HalfWidth95 > 0 {
			parts = append(parts, fmt.Sprintf("%s %.3g", s.Stat, s.HalfWidth95))
		}
	}
	if len(parts) == 0 {
		return "data-dependent"
	}
	return strings.Join(parts, ", ")
}

func newCheck(stdout io.Writer) *cobra.Command {
	var cfgPath string
	var opt pipeline.Options
	cmd := &cobra.Command{
		Use:   "check -c CONFIG --in INPUT --release RELEASE",
		Short: "Re-check an existing release against its input and configuration",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cfgPath)
			if err != nil {
				return err
			}
			m, err := pipeline.Check(cmd.Context(), cfg, opt)
			if m != nil {
				fmt.Fprintf(stdout, "measured k=%d (required %d): %d classes, %d records released, %d of %d suppressed (limit %g)\n",
					m.MinClass, cfg.Privacy.K, m.Classes, m.Rows, m.Suppressed, m.Rows+m.Suppressed, cfg.Privacy.Suppression)
				if m.Utility {
					fmt.Fprintf(stdout, "measured utility: loss %.4f, NCP %.4f, non-uniform entropy %.6g bits, discernibility %.6g, C_AVG %.2f\n",
						m.Loss, m.NCP, m.NonUniformEntropy, m.Discernibility, m.CAvg)
				} else {
					fmt.Fprintf(stdout, "measured utility: discernibility %.6g, C_AVG %.2f (loss, NCP and non-uniform entropy: not measured, the release failed the check first)\n",
						m.Discernibility, m.CAvg)
				}
				for _, s := range m.Sensitive {
					fmt.Fprintf(stdout, "measured on %s: distinct l=%d, entropy l=%.2f, largest %s EMD %.4f\n", s.Column, s.MinDistinct, s.MinEntropyL, s.Distance, s.MaxEMD)
				}
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, "ok: the release satisfies the configuration")
			return nil
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "", "release configuration (YAML, required)")
	cmd.Flags().StringVar(&opt.Input, "in", "", "input table (overrides input.path)")
	cmd.Flags().StringVar(&opt.Output, "release", "", "release file to check (overrides output.path)")
	return cmd
}

func newGen(stdout io.Writer) *cobra.Command {
	var rows int
	var seed uint64
	var out, format string
	cmd := &cobra.Command{
		Use:   "gen --rows N --seed S --out FILE [--format csv|parquet|arrow|arrows]",
		Short: "Write the synthetic hospital sample (patient id, name, age, sex, zip, admission date, diagnosis, length of stay)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := required("out", out); err != nil {
				return err
			}
			if err := pipeline.Generate(out, format, rows, seed); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %d records to %s\n", rows, out)
			return nil
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 10000, "number of records")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed (the same seed gives the same file)")
	cmd.Flags().StringVar(&out, "out", "", "file to write (required)")
	cmd.Flags().StringVar(&format, "format", "", "csv, parquet, arrow (IPC file) or arrows (IPC stream); default: from the extension of --out")
	return cmd
}

// maxWorkers bounds --workers.
const maxWorkers = 256

// loadConfig loads the configuration named by the required -c flag.
func loadConfig(path string) (*schema.Config, error) {
	if err := required("config", path); err != nil {
		return nil, err
	}
	return schema.Load(path)
}

// required reports a missing required flag as a command-line mistake.
func required(flag, value string) error {
	if value == "" {
		return usageError{fmt.Errorf("required flag --%s not set", flag)}
	}
	return nil
}

func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", args)}
	}
	return nil
}
