package dist

import (
	"os"
	"testing"
)

// unsetAll removes the launcher variables for the rest of the test (t.Setenv
// must have recorded them first so that they are restored).
func unsetAll(t *testing.T) {
	t.Helper()
	for _, k := range launcherEnv {
		os.Unsetenv(k)
	}
}
