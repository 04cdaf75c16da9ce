// Command sanitize-beam runs a release, or the dp outputs, on Apache Beam: the same
// configuration as sanitize, the input's parts read on the workers.
//
//	sanitize-beam release -c CONFIG --in INPUT --out RELEASE [--force] [--max-class-table MiB] [--runner=…] [runner flags]
//	sanitize-beam dp      -c CONFIG --in INPUT --out DIR [--ledger LEDGER.json] [--runner=…] [runner flags]
//
// INPUT is a file, a folder of parts (CSV, Parquet, Arrow) or a glob. A release counts
// the classes on the workers and searches on one, then recodes every part into a part
// of RELEASE, checked before it is published. dp noises the histograms, marginals and
// aggregates through Privacy on Beam over the declared domains and publishes them into
// DIR with the CLI's manifest, the spend recorded in the ledger first. Beam's pipeline
// options (--runner and the runner's own) are taken as Beam takes them; without
// --runner, Beam's default. Exit status as sanitize's: 0 done; 2 bad input or
// configuration; 3 the models cannot be met or the budget does not allow the run
// (nothing published); 1 anything else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"sanitizer/beam/stage"
	"sanitizer/job"
	"sanitizer/schema"
)

// The command's flags, beside Beam's pipeline options on the same flag set.
var (
	config = flag.String("c", "", "the configuration file")
	in     = flag.String("in", "", "the input: a CSV file, a folder of CSV parts or a glob")
	out    = flag.String("out", "", "the folder the release's parts are published to")
	force  = flag.Bool("force", false, "replace an existing release")
	maxMiB = flag.Int64("max-class-table", 4096, "release: the most MiB the merged class table may take, which the search holds on one machine (0: no bound)")
	ledger = flag.String("ledger", "", "dp: the privacy ledger the run's spend is recorded in before anything is published")
)

const usage = `usage: sanitize-beam release -c CONFIG --in INPUT --out RELEASE [--force] [--max-class-table MiB] [--runner=…]
       sanitize-beam dp -c CONFIG --in INPUT --out DIR [--ledger LEDGER.json] [--runner=…]`

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
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
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
	if len(args) == 0 || (args[0] != "release" && args[0] != "dp") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	*config, *in, *out, *force, *maxMiB, *ledger = "", "", "", false, 4096, ""
	flag.CommandLine.SetOutput(stderr)
	if err := flag.CommandLine.Parse(args[1:]); err != nil {
		return 2
	}
	if *config == "" || *in == "" || *out == "" {
		fmt.Fprintf(stderr, "sanitize-beam %s: -c, --in and --out are required\n", args[0])
		return 2
	}
	beam.Init()
	j, err := stage.NewJob(*config)
	if err == nil {
		runner := func(ctx context.Context, p *beam.Pipeline) error { return beamx.Run(ctx, p) }
		if args[0] == "dp" {
			err = dp(ctx, j, runner, stdout)
		} else {
			j.MaxClassTable = *maxMiB << 20
			err = release(ctx, j, runner, stdout)
		}
		if err == nil {
			return 0
		}
	}
	fmt.Fprintf(stderr, "sanitize-beam: %v\n", err)
	switch {
	case errors.Is(err, schema.ErrBadInput):
		return 2
	case errors.Is(err, schema.ErrUnattainable):
		return 3
	}
	return 1
}

// release runs the release and prints its summary.
func release(ctx context.Context, j stage.Job, runner stage.Execute, stdout io.Writer) error {
	r, err := stage.Release(ctx, j, *in, *out, *force, runner)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "released %d of %d records to %s (%d parts; %d suppressed); node %v, %s %.4g; checked from the written parts\n",
		r.Measured.Rows, r.Classes.Records(), *out, r.Parts, r.Measured.Suppressed, r.Result.Levels, r.Result.Metric, r.Result.Value)
	fmt.Fprintf(stdout, "class table searched: %d classes, %.1f MiB, at levels %v\n", r.Classes.Len(), float64(r.Classes.Bytes())/(1<<20), r.Cut.Levels())
	fmt.Fprintf(stdout, "stages: count %d ms, search %d ms, write %d ms, check %d ms\n",
		r.Count.Milliseconds(), r.Search.Milliseconds(), r.Write.Milliseconds(), r.Check.Milliseconds())
	return nil
}

// dp runs the dp outputs and prints their summary (the record count is not DP: never
// printed).
func dp(ctx context.Context, j stage.Job, runner stage.Execute, stdout io.Writer) error {
	r, err := stage.DP(ctx, j, job.Options{Input: *in, Output: *out, Ledger: *ledger}, runner)
	if err != nil {
		return err
	}
	r.Manifest.Summary(stdout, filepath.Join(*out, "manifest.json"))
	fmt.Fprintf(stdout, "stages: noise %d ms, publish %d ms\n", r.Noise.Milliseconds(), r.Publish.Milliseconds())
	return nil
}
