package safe

// Start runs f on a goroutine of its own, as Call does, and returns the channel that
// receives f's result once: its error, or a *PanicError if it panicked. The channel
// holds the result until it is received, so the goroutine never waits for a receiver.
//
// It is how a stage streams a source beside the loop that takes its batches:
//
//	streamed := safe.Start(func() error { return src.Stream(ctx, cols, out) })
//	for b := range out { … }
//	if err := <-streamed; err != nil { … }
func Start(f func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- Call(f) }()
	return done
}
