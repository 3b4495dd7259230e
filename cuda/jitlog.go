package cuda

import (
	"bytes"
	"fmt"
	"strings"
)

// withJITLog adds the driver's JIT error log to err, the error of cuModuleLoadDataEx: buf is the
// CU_JIT_ERROR_LOG_BUFFER, a C string (NUL-terminated, possibly empty). Without the log a PTX
// that does not compile says only "a PTX JIT compilation failed".
func withJITLog(err error, buf []byte) error {
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	log := strings.TrimSpace(string(buf))
	if log == "" {
		return fmt.Errorf("%w (the JIT left no log)", err)
	}
	return fmt.Errorf("%w; JIT log:\n%s", err, log)
}
