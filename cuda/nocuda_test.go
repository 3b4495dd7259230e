//go:build !cuda

package cuda

import (
	"errors"
	"testing"
)

func TestOpenWithoutTag(t *testing.T) {
	if _, err := Open(0); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Open without -tags cuda: %v, want ErrNotBuilt", err)
	}
}
