// Command sanitize-beam runs a release on Apache Beam: the same configuration as
// sanitize, the input's parts counted and recoded on the workers, the search on one.
//
//	sanitize-beam release -c CONFIG --in INPUT --out RELEASE [--force] [--max-class-table MiB] [--runner=…] [runner flags]
//
// INPUT is a CSV file, a folder of CSV parts or a glob; RELEASE the folder the release's
// parts are published to, one per input part. Beam's pipeline options (--runner and the
// runner's own) are taken as Beam takes them; without --runner, Beam's default. Exit
// status as sanitize's: 0 done; 2 bad input or configuration; 3 the models cannot be
// met (nothing published); 1 anything else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"sanitizer/beam/stage"
	"sanitizer/schema"
)

// The command's flags, beside Beam's pipeline options on the same flag set.
var (
	config = flag.String("c", "", "the configuration file")
	in     = flag.String("in", "", "the input: a CSV file, a folder of CSV parts or a glob")
	out    = flag.String("out", "", "the folder the release's parts are published to")
	force  = flag.Bool("force", false, "replace an existing release")
	maxMiB = flag.Int64("max-class-table", 4096, "the most MiB the merged class table may take, which the search holds on one machine (0: no bound)")
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command on args, its exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "release" {
		fmt.Fprintln(stderr, "usage: sanitize-beam release -c CONFIG --in INPUT --out RELEASE [--force] [--runner=…]")
		return 2
	}
	*config, *in, *out, *force, *maxMiB = "", "", "", false, 4096
	flag.CommandLine.SetOutput(stderr)
	if err := flag.CommandLine.Parse(args[1:]); err != nil {
		return 2
	}
	if *config == "" || *in == "" || *out == "" {
		fmt.Fprintln(stderr, "sanitize-beam release: -c, --in and --out are required")
		return 2
	}
	beam.Init()
	j, err := stage.NewJob(*config)
	j.MaxClassTable = *maxMiB << 20
	if err == nil {
		var r *stage.Released
		r, err = stage.Release(ctx, j, *in, *out, *force, func(ctx context.Context, p *beam.Pipeline) error { return beamx.Run(ctx, p) })
		if err == nil {
			fmt.Fprintf(stdout, "released %d of %d records to %s (%d parts; %d suppressed); node %v, %s %.4g; checked from the written parts\n",
				r.Measured.Rows, r.Classes.Records(), *out, r.Parts, r.Measured.Suppressed, r.Result.Levels, r.Result.Metric, r.Result.Value)
			fmt.Fprintf(stdout, "stages: count %d ms, search %d ms, write %d ms, check %d ms\n",
				r.Count.Milliseconds(), r.Search.Milliseconds(), r.Write.Milliseconds(), r.Check.Milliseconds())
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
