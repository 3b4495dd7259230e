//go:build linux

package hugepage

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags of the mapping of /proc/self/smaps that holds
// addr.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inside := false
	for sc.Scan() {
		line := sc.Text()
		// A mapping's header starts "lo-hi perms …"; its fields "Name: …".
		if fields := strings.Fields(line); len(fields) > 0 && !strings.HasSuffix(fields[0], ":") {
			if lo, hi, ok := strings.Cut(fields[0], "-"); ok {
				a, err1 := strconv.ParseUint(lo, 16, 64)
				b, err2 := strconv.ParseUint(hi, 16, 64)
				if err1 == nil && err2 == nil {
					inside = uint64(addr) >= a && uint64(addr) < b
					continue
				}
			}
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			return strings.Fields(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return nil
}

// TestAdviseMarksMapping: where the kernel has transparent huge pages, the
// memory under a buffer of MinBytes or more carries the MADV_HUGEPAGE flag
// ("hg" in /proc/self/smaps) after Make, whether or not huge pages were free
// to back it, and a small buffer's does not get it from Advise.
func TestAdviseMarksMapping(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	if !enabled {
		t.Skip("HOLDGO_HUGEPAGES=off")
	}
	big := Make(3 * MinBytes / 4)
	mid := uintptr(unsafe.Pointer(&big[len(big)/2]))
	if flags := vmFlags(t, mid); !contains(flags, "hg") {
		t.Fatalf("VmFlags of a %d-byte Make buffer = %v, want hg (MADV_HUGEPAGE)", 4*len(big), flags)
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
