package stage

import (
	"context"
	"errors"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"sanitizer/schema"
)

// A worker's error reaches the driver as text (the runner reports it inside its own),
// so that its kind, bad input or an unattainable model, which the exit status tells
// apart, would be lost. A worker marks the kind in the text (workerErr) and the driver
// reads it back (run).
const (
	badInputMark     = "[sanitize: bad input] "
	unattainableMark = "[sanitize: unattainable] "
)

// workerErr marks err's kind in its text, for the driver.
func workerErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, schema.ErrBadInput):
		return errors.New(badInputMark + err.Error())
	case errors.Is(err, schema.ErrUnattainable):
		return errors.New(unattainableMark + err.Error())
	}
	return err
}

// runMarked runs p and gives a worker's marked error its kind back: the text after the
// mark, to the end of its line.
func runMarked(ctx context.Context, run Execute, p *beam.Pipeline) error {
	err := run(ctx, p)
	if err == nil {
		return nil
	}
	text := err.Error()
	for mark, kind := range map[string]func(string, ...any) error{badInputMark: schema.BadInput, unattainableMark: schema.Unattainable} {
		if i := strings.Index(text, mark); i >= 0 {
			msg := text[i+len(mark):]
			if j := strings.IndexByte(msg, '\n'); j >= 0 {
				msg = msg[:j]
			}
			return kind("%s", msg)
		}
	}
	return err
}
