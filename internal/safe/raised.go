package safe

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Recovered is the error for a panic value r that a deferred function has just
// recovered: r itself when it is a *PanicError (a worker's, raised again), else a
// *PanicError with the stack of the goroutine. Call it from that deferred function,
// whose stack still holds the frames that panicked.
func Recovered(r any) *PanicError {
	if pe, ok := r.(*PanicError); ok {
		return pe
	}
	return &PanicError{Value: r, Stack: debug.Stack()}
}

// RaisedIn reports whether the panic that a deferred function is recovering was raised
// in a package whose import path starts with one of prefixes (a third-party library's,
// which may panic on bad input) rather than in this module's code. Call it, directly or
// not, from that deferred function.
//
// The frames are read from the panic outwards: the first that is a prefix's package's,
// or this module's, decides; the runtime's, the standard library's and other packages'
// are passed over. A function of this module that the library calls (an allocator
// refusing a buffer, say) is this module's.
func RaisedIn(prefixes ...string) bool {
	pcs := make([]uintptr, 128)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		pkg := packageOf(f.Function)
		switch {
		case !panicking:
			panicking = f.Function == "runtime.gopanic"
		case pkg == module || strings.HasPrefix(pkg, module+"/"):
			return false
		default:
			for _, p := range prefixes {
				if strings.HasPrefix(pkg, p) {
					return true
				}
			}
		}
		if !more {
			return false
		}
	}
}

// module is the path of this module ("sanitizer"): the import path of this package
// without its own place in the module.
var module = func() string {
	pc, _, _, _ := runtime.Caller(0)
	return strings.TrimSuffix(packageOf(runtime.FuncForPC(pc).Name()), "/internal/safe")
}()

// packageOf is the import path of the package of a qualified function name such as
// "github.com/apache/arrow-go/v18/arrow/array.(*String).Value".
func packageOf(name string) string {
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}
