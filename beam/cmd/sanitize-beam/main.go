// Command sanitize-beam runs a release, or the dp outputs, on Apache Beam: the same
// configuration as sanitize, the input's parts read on the workers.
//
//	sanitize-beam release -c CONFIG --in INPUT --out RELEASE [--report R.json] [--report R.html] [--force] [--max-class-table MiB] [--series STATE.json [--series-restart]] [--ledger LEDGER.json] [--runner=…] [runner flags]
//	sanitize-beam dp      -c CONFIG --in INPUT --out DIR [--ledger LEDGER.json] [--runner=…] [runner flags]
//
// Both take sanitize's --quiet (-q), --debug and --log-format text|json, which Beam's
// and the runner's own records follow too; --in and --out override the
// configuration's input.path and output.path, as in sanitize.
//
// INPUT is a file, a folder of parts (CSV, Parquet, Arrow) or a glob, here or in a
// store (gs://, s3://), as RELEASE may be; a release in a store is whole once its
// _SUCCESS marker is there. A release counts
// the classes on the workers and searches on one, then recodes every part into a part
// of RELEASE, checked before it is published. With --series a release is a night of a
// release series (docs/series.md), as sanitize release --series: this process reads
// the input, searches and decides the night against the series' state, the workers
// write the parts, and this process checks them and commits the night (local input
// and output only). A release under privacy.differential-privacy (SafePub) is decided
// the same way, on this machine: the sample drawn and the node chosen as sanitize
// release does, the parts written by the workers, the release verified against the
// sample and its spend charged to --ledger (local input and output only). dp noises the histograms, marginals and
// aggregates through Privacy on Beam over the declared domains and publishes them into
// DIR with the CLI's manifest, the spend recorded in the ledger first. A run's
// intermediate files, which hold the input's data, go to a folder of its own (mode
// 0700) in Beam's --temp_location (else the folder tmp of --staging_location), or
// with neither in the system's temporary folder, never beside RELEASE or DIR: that
// location must be private and, on a cluster, shared with the workers. Beam's pipeline
// options (--runner and the runner's own) are taken as Beam takes them; without
// --runner, Beam's default. Exit status as sanitize's: 0 done; 2 bad input or
// configuration; 3 the models cannot be met or the budget does not allow the run
// (nothing published); 1 anything else.
//
// It turns flags into calls of beam/stage and the main module's runs; nothing imports
// it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	// Inputs and releases on Google Cloud Storage (gs://) and Amazon S3 (s3://), which
	// a Dataflow job's workers share with its driver.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"sanitizer/beam/stage"
	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/supervise"
	"sanitizer/job"
	"sanitizer/report"
)

// The command's flags, sanitize's beside Beam's pipeline options on the same flag set.
var (
	config    = flag.String("config", "", "the configuration file")
	in        = flag.String("in", "", "the input: a file, a folder of parts or a glob (overrides input.path)")
	out       = flag.String("out", "", "the folder the release's parts, or the dp outputs, are published to (overrides output.path)")
	force     = flag.Bool("force", false, "release: replace an existing release (and report), once the new one is verified")
	maxMiB    = flag.Int64("max-class-table", 4096, "release: the most MiB the merged class table may take, which the search holds on one machine (0: no bound)")
	ledger    = flag.String("ledger", "", "dp, and a release under privacy.differential-privacy: the privacy ledger the run's spend is recorded in before anything is published")
	seriesAt  = flag.String("series", "", "release: a night of a release series: its state file (JSON, created on the first night), as sanitize release --series (docs/series.md)")
	restart   = flag.Bool("series-restart", false, "release, with --series: start a new series in that state file (the old nights' files stay public: the custodian's decision)")
	quiet     = flag.Bool("quiet", false, "print errors only (no warnings)")
	debug     = flag.Bool("debug", false, "log everything, Beam's and the runner's records too (never a data value)")
	logFormat = flag.String("log-format", "text", "text (warnings and errors) or json (a record per stage, Beam's and the runner's records among them, for unattended jobs)")
)

// reportTo is every --report: the release's report is written to each, in the format
// its name says.
var reportTo reports

func init() {
	flag.Var(&reportTo, "report", "release: write the release's report here: JSON when the name ends in .json, HTML when in .html (may be given more than once)")
	flag.StringVar(config, "c", "", "the configuration file (--config)")
	flag.BoolVar(quiet, "q", false, "print errors only (--quiet)")
}

const usage = `usage: sanitize-beam release -c CONFIG --in INPUT --out RELEASE [--report R.json] [--report R.html] [--force] [--max-class-table MiB] [--series STATE.json [--series-restart]] [--ledger LEDGER.json] [--runner=…]
       sanitize-beam dp -c CONFIG --in INPUT --out DIR [--ledger LEDGER.json] [--runner=…]
       every command also: [--quiet] [--debug] [--log-format text|json]`

func main() {
	if worker(os.Args[1:]) {
		// A runner (Flink, Spark, Dataflow, Prism with a worker pool) started this
		// binary as its worker: Beam's harness, started by beam.Init from the flags,
		// runs the stages' functions and exits; it never returns here.
		flag.Parse()
		beam.Init()
		fmt.Fprintln(os.Stderr, "sanitize-beam: internal error: the Beam worker harness returned")
		os.Exit(1)
	}
	// The run goes on in a child process whose status is passed on only when it chose
	// it (a crash of the Go runtime exits 2, the status of bad input, and exits 1
	// instead). The first SIGINT or SIGTERM cancels the run, which cleans up; the
	// supervisor kills it at a second.
	supervise.Main("sanitize-beam", func() int {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	})
}

// worker reports whether args are a Beam worker's (Beam's container boot starts the
// pipeline's binary with --worker=true and its endpoints), not a command's.
func worker(args []string) bool {
	for _, a := range args {
		if a == "--worker=true" || a == "-worker=true" || a == "--worker" || a == "-worker" {
			return true
		}
	}
	return false
}

// run is the command on args, its exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// What is printed quotes names and paths from the configuration and the data:
	// their bidi and terminal controls are shown as escapes (report.Visible).
	stdout, stderr = report.NewTerminalWriter(stdout), report.NewTerminalWriter(stderr)
	if len(args) == 0 || (args[0] != "release" && args[0] != "dp") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	*config, *in, *out, reportTo, *force, *maxMiB, *ledger = "", "", "", nil, false, 4096, ""
	*seriesAt, *restart = "", false
	*quiet, *debug, *logFormat = false, false, "text"
	flag.CommandLine.SetOutput(stderr)
	if err := flag.CommandLine.Parse(args[1:]); err != nil {
		return 2
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(stderr, "sanitize-beam %s: unexpected argument %q\n%s\n", args[0], flag.Arg(0), usage)
		return 2
	}
	if *config == "" {
		fmt.Fprintf(stderr, "sanitize-beam %s: -c (--config) is required\n", args[0])
		return 2
	}
	if args[0] == "dp" && *out == "" {
		fmt.Fprintln(stderr, "sanitize-beam dp: --out is required")
		return 2
	}
	beam.Init()
	log, err := logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "sanitize-beam: %v\n", err)
		return 2
	}
	// Beam's records and the runner's go through slog's default logger: at the
	// command's level and in its format.
	slog.SetDefault(log)
	err = command(ctx, args[0], log, stdout)
	if err == nil {
		return 0
	}
	code := 1
	switch {
	case errors.Is(err, fault.ErrInternal):
	case errors.Is(err, fault.ErrBadInput):
		code = 2
	case errors.Is(err, fault.ErrUnattainable):
		code = 3
	}
	if *logFormat == "json" {
		log.Error(err.Error(), "exit", code)
	} else {
		fmt.Fprintf(stderr, "sanitize-beam: %v\n", err)
	}
	return code
}

// logger is the command's logger on stderr, as sanitize's: text with warnings and
// errors (errors only with --quiet), or JSON records of every stage; everything with
// --debug.
func logger(stderr io.Writer) (*slog.Logger, error) {
	level := slog.LevelWarn
	switch {
	case *debug:
		level = slog.LevelDebug
	case *quiet:
		level = slog.LevelError
	case *logFormat == "json":
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	switch *logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not one of text, json", *logFormat)
}

// command runs the release or the dp outputs.
func command(ctx context.Context, name string, log *slog.Logger, stdout io.Writer) error {
	j, err := stage.NewJob(*config)
	if err != nil {
		return err
	}
	runner := func(ctx context.Context, p *beam.Pipeline) error { return beamx.Run(ctx, p) }
	opt := job.Options{Input: *in, Output: *out, Reports: reportTo, Force: *force, Ledger: *ledger, Log: log, Series: *seriesAt, SeriesRestart: *restart}
	j.Temp = tempLocation()
	if name == "dp" {
		if opt.Series != "" || opt.SeriesRestart {
			return fault.BadInput("sanitize-beam dp: --series and --series-restart are release's")
		}
		return dp(ctx, j, opt, runner, stdout)
	}
	if opt.Series != "" || opt.SeriesRestart {
		return onDriver(ctx, j, opt, runner, stdout, stage.ReleaseSeries)
	}
	if j.DifferentiallyPrivate() {
		return onDriver(ctx, j, opt, runner, stdout, stage.ReleaseDP)
	}
	j.MaxClassTable = *maxMiB << 20
	return release(ctx, j, opt, runner, stdout)
}

// tempLocation is where a run makes its temporary folder (stage.Job.Temp): Beam's
// --temp_location, else, as Beam's Dataflow runner takes it, the folder tmp in
// --staging_location when that is given; "": the system's temporary folder.
func tempLocation() string {
	value := func(name string) string {
		if f := flag.Lookup(name); f != nil { // Beam's Dataflow runner's flags
			return f.Value.String()
		}
		return ""
	}
	if t := value("temp_location"); t != "" {
		return t
	}
	if s := value("staging_location"); s != "" {
		return strings.TrimRight(s, "/") + "/tmp"
	}
	return ""
}

// levelsText names each quasi-identifier's level as the CLI's summary does
// (report.LevelOf): "age level 2 of 0–4, sex level 0 of 0–1".
func levelsText(cols []generalize.Column, levels []int) string {
	parts := make([]string, len(levels))
	for i, l := range levels {
		if i < len(cols) && cols[i].Hierarchy != nil {
			parts[i] = cols[i].Name + " " + report.LevelOf(l, cols[i].Hierarchy.Height())
		} else {
			parts[i] = fmt.Sprintf("level %d", l)
		}
	}
	return strings.Join(parts, ", ")
}

// release runs the release and prints its summary.
func release(ctx context.Context, j stage.Job, opt job.Options, runner stage.Execute, stdout io.Writer) error {
	r, err := stage.Release(ctx, j, opt, runner)
	if err != nil {
		return err
	}
	cols := r.Classes.Columns()
	fmt.Fprintf(stdout, "released %d of %d records to %s (%d parts; %d suppressed); %s %.4g; checked from the written parts\n",
		r.Measured.Rows, r.Classes.Records(), r.Out, r.Parts, r.Measured.Suppressed, r.Result.Metric, r.Result.Value)
	fmt.Fprintf(stdout, "node (level 0 = original values, the top = *): %s\n", levelsText(cols, r.Result.Levels))
	fmt.Fprintf(stdout, "class table searched: %d classes, %.1f MiB, counted at %s\n", r.Classes.Len(), float64(r.Classes.Bytes())/(1<<20), levelsText(cols, r.Cut.Levels()))
	fmt.Fprintf(stdout, "stages: count %d ms, search %d ms, write %d ms, check %d ms\n",
		r.Count.Milliseconds(), r.Search.Milliseconds(), r.Write.Milliseconds(), r.Check.Milliseconds())
	for _, p := range opt.ReportPaths() {
		fmt.Fprintf(stdout, "report: %s\n", p)
	}
	return nil
}

// onDriver runs a release decided on this machine, its parts written by the workers
// (a night of a release series, a differentially private release: stage.ReleaseSeries,
// stage.ReleaseDP), and prints its summary, as sanitize's.
func onDriver(ctx context.Context, j stage.Job, opt job.Options, runner stage.Execute, stdout io.Writer, decide func(context.Context, stage.Job, job.Options, stage.Execute) (*report.Report, error)) error {
	rep, err := decide(ctx, j, opt, runner)
	if err != nil {
		return err
	}
	rep.Summary(stdout)
	for _, p := range opt.ReportPaths() {
		fmt.Fprintf(stdout, "report: %s\n", p)
	}
	return nil
}

// reports is a flag that may be given more than once, each value one more path.
type reports []string

func (r *reports) String() string { return strings.Join(*r, ", ") }

func (r *reports) Set(path string) error {
	*r = append(*r, path)
	return nil
}

// dp runs the dp outputs and prints their summary (the record count is not DP: never
// printed).
func dp(ctx context.Context, j stage.Job, opt job.Options, runner stage.Execute, stdout io.Writer) error {
	r, err := stage.DP(ctx, j, opt, runner)
	if err != nil {
		return err
	}
	r.Manifest.Summary(stdout, filepath.Join(opt.Output, "manifest.json"))
	fmt.Fprintf(stdout, "stages: noise %d ms, publish %d ms\n", r.Noise.Milliseconds(), r.Publish.Milliseconds())
	return nil
}
