// Command sanitize turns a sensitive table into a file that can be published: it
// generalizes quasi-identifiers until k-anonymity holds, verifies the written release
// independently, and reports what it did.
//
// Exit status: 0 done; 2 bad input or configuration; 3 the privacy model cannot be
// met within the suppression limit (nothing written); 1 any other failure.
//
// It turns flags into calls of the runs' packages (release, dprun, validate, gen) and
// their errors into exit statuses; it knows nothing of algorithms, and nothing imports
// it.
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
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"sanitizer/dprun"
	"sanitizer/fault"
	"sanitizer/gen"
	"sanitizer/internal/build"
	"sanitizer/internal/safe"
	"sanitizer/internal/supervise"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/release"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/validate"
)

func main() {
	// The encoded table lives through the whole run while the search and the passes
	// make short-lived garbage: collecting at half the live heap, not the whole of it,
	// keeps the peak near what the codes need (10M records, 8 quasi-identifiers: 407 MB
	// instead of 586 MB; BENCHMARKS.md). GOGC in the environment overrides it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	// The run goes on in a child process whose status is passed on only when it chose
	// it: a crash of the Go runtime (out of memory, say) exits 2, the status of bad
	// input, and exits 1 instead (an internal error).
	supervise.Main("sanitize", func() int {
		ctx, stop := signalContext()
		defer stop()
		return run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	})
}

// signalContext is a context that SIGINT or SIGTERM cancels: every command then stops,
// removes its temporaries and exits non-zero, instead of being killed mid-write.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// run executes the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, stdout, stderr, nil)
}

// runWith is run with a function told of each stage a release, dp or gen run begins
// (job.Options.AtStage; nil: none), where the tests stop a run.
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, atStage func(stage job.Stage)) int {
	// What is printed quotes names, paths and labels from the configuration and the
	// data: their bidi and terminal controls are shown as escapes (report.Visible).
	// Only the progress line, which quotes none, writes to stderr as it is.
	g := &globals{stderr: report.NewTerminalWriter(stderr), progress: stderr, atStage: atStage}
	stdout, stderr = report.NewTerminalWriter(stdout), g.stderr
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
	// A panic of this goroutine (the workers' are their stages' errors) is an internal
	// error, not a crash.
	err := safe.Call(func() error { return root.ExecuteContext(ctx) })
	if err == nil {
		return 0
	}
	code := 2
	if started || errors.Is(err, fault.ErrInternal) {
		code = exitCode(err)
	}
	logStack(g.log, err)
	if cause := context.Cause(ctx); cause != nil && errors.Is(err, context.Canceled) {
		err = fmt.Errorf("interrupted (%w): the run stopped and removed its temporaries: %w", cause, err)
	}
	if errors.Is(err, publish.ErrExists) {
		err = fmt.Errorf("%w (--force replaces it)", err)
	}
	if g.log != nil && g.logFormat == "json" {
		g.log.Error(err.Error(), "exit", code)
	} else {
		fmt.Fprintln(stderr, "sanitize:", err)
	}
	return code
}

// globals are the flags every command takes, and what they set up.
type globals struct {
	stderr        io.Writer // logs and errors
	progress      io.Writer // the progress line on a terminal
	quiet         bool
	debug         bool
	logFormat     string
	progressEvery time.Duration
	log           *slog.Logger
	atStage       func(stage job.Stage) // given to every run as job.Options.AtStage
}

// setup makes the logger: text on stderr with warnings and errors only (none with
// --quiet), or JSON records of every stage for unattended jobs.
func (g *globals) setup() error {
	level := slog.LevelWarn
	switch {
	case g.debug:
		level = slog.LevelDebug
	case g.quiet:
		level = slog.LevelError
	case g.logFormat == "json":
		level = slog.LevelInfo
	}
	switch g.logFormat {
	case "text":
		g.log = slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
	case "json":
		g.log = slog.New(slog.NewJSONHandler(g.stderr, &slog.HandlerOptions{Level: level}))
	default:
		return usageError{fmt.Errorf("--log-format: %q is not one of text, json", g.logFormat)}
	}
	if g.progressEvery <= 0 {
		return usageError{fmt.Errorf("--progress-interval: must be positive")}
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

// showProgress reports the run's progress while the returned function has not been
// called: with JSON logs, a "progress" record every --progress-interval (for unattended
// jobs); with text logs on a terminal, one line of stderr redrawn every half second.
func (g *globals) showProgress(p *job.Progress) (stop func()) {
	switch {
	case g.logFormat == "json" && !g.quiet:
		return every(g.progressEvery, func() {
			g.log.Info("progress", "stage", p.Stage(), "records_read", p.Read.Load(),
				"nodes_evaluated", p.Evaluated.Load(), "records_released", p.Written.Load())
		}, func() {})
	case g.logFormat == "text" && terminal(g.progress):
		return every(500*time.Millisecond, func() {
			fmt.Fprintf(g.progress, "\r\033[K%s: %d records read, %d nodes evaluated, %d records released",
				p.Stage(), p.Read.Load(), p.Evaluated.Load(), p.Written.Load())
		}, func() { fmt.Fprint(g.progress, "\r\033[K") })
	}
	return func() {}
}

// every calls tick at each interval until the returned function is called, which
// calls done and returns once the ticking goroutine has ended.
func every(interval time.Duration, tick, done func()) (stop func()) {
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				done()
				return
			case <-t.C:
				tick()
			}
		}
	}()
	return func() { close(quit); <-finished }
}

// usageError marks a command-line mistake (exit 2).
type usageError struct{ error }

func (e usageError) Is(target error) bool { return target == fault.ErrBadInput }

func exitCode(err error) int {
	switch {
	case errors.Is(err, fault.ErrInternal):
		return 1
	case errors.Is(err, fault.ErrBadInput):
		return 2
	case errors.Is(err, fault.ErrUnattainable):
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
		Version:       build.Version,
	}
	root.SetVersionTemplate("sanitize {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "print errors only (no warnings)")
	root.PersistentFlags().BoolVar(&g.debug, "debug", false, "log everything, down to the stack of an internal error (never a data value)")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "text (warnings and errors) or json (a record per stage, and progress, for unattended jobs)")
	root.PersistentFlags().DurationVar(&g.progressEvery, "progress-interval", 10*time.Second, "with --log-format json: how often a long release logs its progress")
	root.AddCommand(newRelease(stdout, g), newCheck(stdout), newRisk(stdout), newDP(stdout, g), newValidate(stdout), newGen(stdout, g))
	return root
}

func newRelease(stdout io.Writer, g *globals) *cobra.Command {
	var cfgPath string
	var opt job.Options
	cmd := &cobra.Command{
		Use:   "release -c CONFIG --in INPUT --out RELEASE [--report R.json] [--report R.html] [--force] [--workers N] [--series STATE.json [--series-restart]] [--ledger LEDGER.json]",
		Short: "Write a k-anonymous, verified release of INPUT",
		Long: "Generalize the quasi-identifiers of INPUT to the node of least information loss (search.algorithm: optimal)\n" +
			"or partition them (mondrian) until every published class meets the configuration's models:\n" + modelsHelp +
			"suppressing at most privacy.suppression of the records. The written release is re-read and\n" +
			"verified by independent code before it is put at RELEASE; an existing RELEASE is refused unless --force.\n" +
			"INPUT and RELEASE: " + formatsHelp + ".\n" +
			"--report, which may be given more than once, writes the release's report in the format its name says:\n" +
			"R.json (JSON, what check --report reads) or R.html (a self-contained page, for the custodian).\n\n" +
			"Exit status: 0 released; 2 bad input or configuration (the message names the file, column, row or key);\n" +
			"3 the models cannot be met within the suppression limit (nothing written); 1 any other failure.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.Workers < 0 || opt.Workers > maxWorkers {
				return usageError{fmt.Errorf("--workers: must be between 0 (one per CPU) and %d", maxWorkers)}
			}
			cfg, err := loadConfig(cfgPath)
			if err != nil {
				return err
			}
			gc := &collector{}
			defer gc.restore()
			opt.Log, opt.AtStage = g.log, both(gc.at, g.atStage)
			opt.Progress = &job.Progress{}
			stop := g.showProgress(opt.Progress)
			rep, err := release.Release(cmd.Context(), cfg, opt)
			stop()
			if err != nil {
				return err
			}
			rep.Summary(stdout)
			for _, p := range opt.ReportPaths() {
				fmt.Fprintf(stdout, "report: %s\n", p)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "", "release configuration (YAML, required)")
	cmd.Flags().StringVar(&opt.Input, "in", "", "input table: a file, or a folder or glob pattern of parts read as one (overrides input.path)")
	cmd.Flags().StringVar(&opt.Output, "out", "", "release file to write, or a folder (ending in /) for one release part per input part (overrides output.path)")
	cmd.Flags().StringArrayVar(&opt.Reports, "report", nil, "write the release's report here: JSON when the name ends in .json, HTML when in .html (may be given more than once)")
	cmd.Flags().BoolVar(&opt.Force, "force", false, "replace an existing release (and report), once the new one is verified")
	cmd.Flags().IntVar(&opt.Workers, "workers", 0, "parallel workers (default: number of CPUs)")
	cmd.Flags().StringVar(&opt.Series, "series", "", "a night of a release series: its state file (JSON, created on the first night), so that no two nights' files can be subtracted to learn more than one shows (docs/series.md)")
	cmd.Flags().BoolVar(&opt.SeriesRestart, "series-restart", false, "with --series: start a new series in that state file (the old nights' files stay public: the custodian's decision)")
	cmd.Flags().StringVar(&opt.Ledger, "ledger", "", "budget ledger (JSON) to charge a release under privacy.differential-privacy; created if missing")
	return cmd
}

func newDP(stdout io.Writer, g *globals) *cobra.Command {
	var cfgPath string
	var opt job.Options
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
			opt.Log, opt.AtStage = g.log, g.atStage
			man, err := dprun.Run(cmd.Context(), cfg, opt)
			if err != nil {
				return err
			}
			man.Summary(stdout, filepath.Join(opt.Output, "manifest.json"))
			return nil
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "", "configuration with a dp section (YAML, required)")
	cmd.Flags().StringVar(&opt.Input, "in", "", "input table: a file, or a folder or glob pattern of parts read as one (overrides input.path)")
	cmd.Flags().StringVar(&opt.Output, "out", "", "folder to write the outputs into (must not exist, or be empty)")
	cmd.Flags().StringVar(&opt.Ledger, "ledger", "", "budget ledger (JSON) to charge; created if missing")
	return cmd
}

func newValidate(stdout io.Writer) *cobra.Command {
	var cfgPath string
	var opt job.Options
	cmd := &cobra.Command{
		Use:   "validate -c CONFIG [--in INPUT]",
		Short: "Check a configuration, its hierarchies and (with --in) an input against it; writes nothing",
		Long: "Check the configuration as release and dp would, parse its hierarchy files, and with --in read the input:\n" +
			"its columns and types, every quasi-identifier value covered by its hierarchy, every dp value in its domain.\n" +
			"Prints the size of the generalization lattice. Writes nothing.\n\n" +
			"Exit status: 0 valid; 2 the configuration, a hierarchy or the input is not (the message names it).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := required("config", cfgPath); err != nil {
				return err
			}
			// A configuration in error is checked as far as it decodes: every
			// mistake is reported in one run.
			cfg, cfgErr := schema.LoadDraft(cfgPath)
			if cfg == nil {
				return cfgErr
			}
			v, err := validate.Validate(cmd.Context(), cfg, cfgErr, opt)
			if err != nil {
				return err
			}
			v.Summary(stdout, cfgPath)
			return nil
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "", "configuration (YAML, required)")
	cmd.Flags().StringVar(&opt.Input, "in", "", "input table to check against it: a file, or a folder or glob pattern of parts (overrides input.path)")
	return cmd
}

func newCheck(stdout io.Writer) *cobra.Command {
	var cfgPath string
	var opt job.Options
	cmd := &cobra.Command{
		Use:   "check -c CONFIG --in INPUT --release RELEASE [--report R.json] [--series STATE.json]",
		Short: "Re-check an existing release against its input and configuration",
		Long: "Re-check RELEASE against INPUT and the configuration's models, counted from the files by independent code:\n" + modelsHelp +
			"the records it leaves out, the truthfulness of every record, and the parameters it records.\n" +
			"INPUT and RELEASE: " + formatsHelp + ".\n" +
			"--report takes the JSON report the release wrote (release --report R.json): its digest and node are checked too;\n" +
			"an HTML report (R.html) or any other file is exit 2.\n\n" +
			"Exit status: 0 the release satisfies the configuration; 2 bad input or configuration; 3 a violation; 1 any other failure.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cfgPath)
			if err != nil {
				return err
			}
			m, err := release.Check(cmd.Context(), cfg, opt)
			if m != nil {
				report.CheckSummary(stdout, cfg, m)
			}
			if err != nil {
				return err
			}
			if cfg.Privacy.DifferentialPrivacy != nil {
				fmt.Fprintln(stdout, "ok: the release is truthful at its node and every class holds k records (that it is the sample's every class of k or more, whole, was verified by the release; check does not know the sample)")
				return nil
			}
			fmt.Fprintln(stdout, "ok: the release satisfies the configuration")
			return nil
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "", "release configuration (YAML, required)")
	cmd.Flags().StringVar(&opt.Input, "in", "", "input table: a file, or a folder or glob pattern of parts read as one (overrides input.path)")
	cmd.Flags().StringVar(&opt.Output, "release", "", "release file to check (overrides output.path)")
	cmd.Flags().StringVar(&opt.Report, "report", "", "the JSON report the release wrote (release --report R.json): its recorded node and parameters are checked too (a CSV release has no metadata)")
	cmd.Flags().StringVar(&opt.Series, "series", "", "the release is the last night of the series whose state this is: its additions and removals against the night before are checked too (docs/series.md)")
	return cmd
}

func newRisk(stdout io.Writer) *cobra.Command {
	var cfgPath string
	var opt job.Options
	cmd := &cobra.Command{
		Use:   "risk -c CONFIG --in INPUT [--release RELEASE] [--report R.html] [--report R.json] [--force]",
		Short: "Measure the re-identification risk of INPUT (and of a release of it); writes no release",
		Long: "Measure the re-identification risk of INPUT at its original quasi-identifier values: the prosecutor model\n" +
			"(highest and average risk, records above 20%, 10% and 5%, sample uniqueness), and with the configuration's\n" +
			"risk section (population or sampling-fraction) the journalist and marketer models and the population\n" +
			"uniqueness (Zayatz, Pitman, SNB, Dankar's rule); how much each quasi-identifier and each pair of them\n" +
			"sets records apart (distinction, separation); and with --release the same measures of the release,\n" +
			"counted from its file, against the configuration's risk-based models. --report, which may be given more\n" +
			"than once, writes the analysis in the format its name says: R.html (a self-contained page) or R.json.\n" +
			"INPUT and RELEASE: " + formatsHelp + ".\n\n" +
			"Exit status: 0 measured; 2 bad input or configuration; 3 the release misses the configuration's risk\n" +
			"models (the report is still written); 1 any other failure.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cfgPath)
			if err != nil {
				return err
			}
			a, err := release.Risk(cmd.Context(), cfg, opt)
			if a != nil {
				a.Summary(stdout)
				for _, p := range opt.ReportPaths() {
					fmt.Fprintf(stdout, "report: %s\n", p)
				}
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "", "configuration (YAML, required): its quasi-identifiers, hierarchies, risk and privacy sections")
	cmd.Flags().StringVar(&opt.Input, "in", "", "input table: a file, or a folder or glob pattern of parts read as one (overrides input.path)")
	cmd.Flags().StringVar(&opt.Output, "release", "", "a release of INPUT to measure too, against the configuration's risk models")
	cmd.Flags().StringArrayVar(&opt.Reports, "report", nil, "write the analysis here: HTML when the name ends in .html, JSON when in .json (may be given more than once)")
	cmd.Flags().BoolVar(&opt.Force, "force", false, "replace an existing report")
	return cmd
}

func newGen(stdout io.Writer, g *globals) *cobra.Command {
	var rows int
	var seed uint64
	var out, format, tableName string
	var force bool
	cmd := &cobra.Command{
		Use:   "gen --rows N --seed S --out FILE [--table hospital|admissions] [--format csv|parquet|arrow|arrows] [--force]",
		Short: "Write a synthetic hospital table (patient id, name, age, sex, zip, admission date, diagnosis, length of stay, ward, insurance)",
		Long: "Write a synthetic hospital table (patient id, name, age, sex, zip, admission date, diagnosis, length of stay, ward, insurance).\n\n" +
			"--table hospital (the default): one row per admission, about 15% of them readmissions of a recent patient.\n" +
			"--table admissions: several rows per patient (1 to 20, a truncated zeta distribution: 46% one, mean 3.5),\n" +
			"the patient's rows together in date order, age (at the first admission), sex, zip and insurance the same in all;\n" +
			"--rows counts admissions, so 10,000,000 rows hold about 2.9 million patients.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := gen.ParseTable(tableName)
			if err != nil {
				return err
			}
			if err := required("out", out); err != nil {
				return err
			}
			if err := gen.TableContext(cmd.Context(), t, out, format, rows, seed, job.Options{Force: force, AtStage: g.atStage}); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %d records to %s\n", rows, out)
			return nil
		},
	}
	rows, seed = 10000, 1
	cmd.Flags().Var(decimal[int]{&rows}, "rows", fmt.Sprintf("number of records, 1 to %d", gen.MaxRows))
	cmd.Flags().Var(decimal[uint64]{&seed}, "seed", "random seed, a decimal number below 2^64 (the same seed gives the same file)")
	cmd.Flags().StringVar(&out, "out", "", "file to write (required)")
	cmd.Flags().StringVar(&tableName, "table", gen.TableHospital.String(), "the table: hospital (one row per admission) or admissions (1 to 20 rows per patient; --rows counts admissions)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing file at --out")
	cmd.Flags().StringVar(&format, "format", "", "csv, parquet, arrow (IPC file) or arrows (IPC stream); default: from the extension of --out")
	return cmd
}

// modelsHelp lists the models a release enforces, as README.md's synopsis does.
const modelsHelp = "  k-anonymity (privacy.k); on sensitive columns l-diversity (distinct, entropy, recursive (c,l)),\n" +
	"  t-closeness (equal, ordered, hierarchical EMD) and β-likeness (basic, enhanced); the risk-based models\n" +
	"  (highest-risk, average-risk, records-at-risk, population-uniqueness); for a research subset (privacy.subset)\n" +
	"  δ-presence and k-map; profitability, the game-theoretic model (privacy.profitability);\n"

// formatsHelp lists the table formats a run reads and writes, as README.md's synopsis does.
const formatsHelp = "csv, parquet, arrow (IPC file) or arrows (IPC stream), by input.format/output.format or the extension"

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
