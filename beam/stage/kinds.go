package stage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"sanitizer/fault"
)

// A worker's error reaches the driver as text (the runner reports it inside its own),
// so that its kind, bad input or an unattainable model, which the exit status tells
// apart, would be lost. A worker marks the kind in the text (workerErr) and the driver
// reads it back (runMarked). A runner that reports a failed job without its workers'
// errors (Dataflow says only that the job failed) would lose the text too: a worker
// also writes the marked text into the job's folder for them (Job.Errors), which the
// driver reads when the runner's error carries no mark.
const (
	badInputMark     = "[sanitize: bad input] "
	unattainableMark = "[sanitize: unattainable] "
)

// mark marks err's kind in its text.
func mark(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fault.ErrBadInput):
		return errors.New(badInputMark + err.Error())
	case errors.Is(err, fault.ErrUnattainable):
		return errors.New(unattainableMark + err.Error())
	}
	return err
}

// workerErr marks err's kind in its text for the driver and, when it has a kind and
// the job has a folder for errors, writes the text there too.
func (j Job) workerErr(ctx context.Context, err error) error {
	marked := mark(err)
	if marked == err || j.Errors == "" {
		return marked
	}
	var b [8]byte
	rand.Read(b[:])
	// Best effort: the runner's own report of the error stands when this fails.
	writeFile(context.WithoutCancel(ctx), joinPath(j.Errors, hex.EncodeToString(b[:])+".txt"), []byte(marked.Error()))
	return marked
}

// runMarked runs p and gives a worker's marked error its kind back: the text after the
// mark, to the end of its line, in the runner's error or else in the first error the
// workers wrote into the job's folder for them.
func runMarked(ctx context.Context, run Execute, p *beam.Pipeline, j Job) error {
	err := run(ctx, p)
	if err == nil {
		return nil
	}
	if kinded := unmark(err.Error()); kinded != nil {
		return kinded
	}
	for _, text := range workerErrors(context.WithoutCancel(ctx), j.Errors) {
		if kinded := unmark(text); kinded != nil {
			return kinded
		}
	}
	return err
}

// unmark is the error of the first marked message in text, of its kind; nil when
// text holds none.
func unmark(text string) error {
	for mark, kind := range map[string]func(string, ...any) error{badInputMark: fault.BadInput, unattainableMark: fault.Unattainable} {
		if i := strings.Index(text, mark); i >= 0 {
			msg := text[i+len(mark):]
			if j := strings.IndexByte(msg, '\n'); j >= 0 {
				msg = msg[:j]
			}
			return kind("%s", msg)
		}
	}
	return nil
}

// workerErrors is the texts the workers wrote into the folder dir ("": none), in name
// order.
func workerErrors(ctx context.Context, dir string) []string {
	if dir == "" {
		return nil
	}
	var paths []string
	if isObject(dir) {
		paths, _ = listObjects(ctx, dir)
	} else {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			paths = append(paths, joinPath(dir, e.Name()))
		}
	}
	slices.Sort(paths)
	var out []string
	for _, p := range paths {
		if data, err := readFile(ctx, p); err == nil {
			out = append(out, string(data))
		}
	}
	return out
}
