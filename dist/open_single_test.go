//go:build !mpi

package dist

import "testing"

func TestOpenDefaultBuild(t *testing.T) {
	for _, k := range launcherEnv {
		t.Setenv(k, "")
	}
	for _, k := range launcherEnv {
		t.Run(k, func(t *testing.T) {
			// t.Setenv above only records the old values; unset all, then set one.
			unsetAll(t)
			t.Setenv(k, "2")
			if _, err := Open(); err == nil {
				t.Fatalf("%s set: Open in the default build gave no error", k)
			}
		})
	}
	unsetAll(t)
	c, err := Open()
	if err != nil || c.Size() != 1 {
		t.Fatalf("Open without a launcher: %v, %v", c, err)
	}
}
