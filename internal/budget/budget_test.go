package budget

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// setLimit sets the budget for one test and restores the default after it.
func setLimit(t *testing.T, n int64) {
	t.Helper()
	SetLimit(n)
	t.Cleanup(func() { SetLimit(0) })
}

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 << 20, "4GiB": 4 << 30, "2G": 2 << 30, "2g": 2 << 30, "1.5e9": 1.5e9, "1048576": 1 << 20,
		" 3 gb ": 3e9, "1TiB": 1 << 40, "2048k": 2 << 20, "1.5GiB": 3 << 29,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1G", "0", "NaN", "Inf", "1e30", "5EiB", "1000", "1KiB", "GiB", "1.2.3G"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1 << 10: "1 KiB", 3 << 29: "1.5 GiB", 5 << 20: "5 MiB",
		1020 << 20: "1020 MiB", 1023 << 10: "1023 KiB", 2000 << 30: "2000 GiB", 999 << 20: "999 MiB"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLimitAndDefault(t *testing.T) {
	d := Default()
	if !(d >= 1<<20) {
		t.Fatalf("Default %d", d)
	}
	if as := addressSpaceLimit(); as > 0 && d > as/2 {
		t.Errorf("Default %s above half the address-space limit %s", Format(d), Format(as))
	}
	if m := physicalMemory(); m > 0 && d > m/2 {
		t.Errorf("Default %s above half of physical memory %s", Format(d), Format(m))
	}
	setLimit(t, 64<<20)
	if Limit() != 64<<20 {
		t.Errorf("Limit %d after SetLimit(64 MiB)", Limit())
	}
	SetLimit(-1)
	if Limit() != d {
		t.Errorf("Limit %d after SetLimit(-1), want the default %d", Limit(), d)
	}
}

// TestTracker: a tracker sums what one load takes and refuses the first item that takes it over the
// budget (naming it, wrapping ErrExceeded), a negative or overflowing size included; a refused item
// takes nothing.
func TestTracker(t *testing.T) {
	setLimit(t, 10<<20)
	tr := New("file.pth")
	if err := tr.Take(4<<20, "tensor a"); err != nil {
		t.Fatal(err)
	}
	if err := tr.Take(6<<20, "tensor b"); err != nil {
		t.Fatal(err)
	}
	err := tr.Take(1, "tensor c")
	if !errors.Is(err, ErrExceeded) || !strings.Contains(err.Error(), "file.pth: tensor c") {
		t.Errorf("over the budget: %v", err)
	}
	if tr.Used() != 10<<20 {
		t.Errorf("used %d after a refusal, want %d", tr.Used(), 10<<20)
	}
	for _, n := range []int64{-1, math.MinInt64, math.MaxInt64} {
		if err := New("x").Take(n, "it"); !errors.Is(err, ErrExceeded) {
			t.Errorf("Take(%d): %v", n, err)
		}
	}
	if err := Check(10<<20, "x"); err != nil {
		t.Errorf("Check of the whole budget: %v", err)
	}
	if err := Check(10<<20+1, "x"); !errors.Is(err, ErrExceeded) {
		t.Errorf("Check over the budget: %v", err)
	}
	for _, c := range []struct {
		count, size int64
		ok          bool
	}{{1 << 20, 10, true}, {1<<20 + 1, 10, false}, {0, 1 << 40, true}, {1 << 40, 0, true}, {-1, 4, false}, {4, -1, false},
		{math.MaxInt64, 8, false}, {1 << 62, 1 << 62, false}} {
		if err := CheckCount(c.count, c.size, "x"); (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrExceeded)) {
			t.Errorf("CheckCount(%d, %d): %v, want ok %v", c.count, c.size, err, c.ok)
		}
	}
}

// TestRegularFilesOnly: Stat, Open and ReadFile take regular files (through a symbolic link too) and
// refuse directories, FIFOs and devices before opening them (a FIFO would block).
func TestRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.bin")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		if b, err := ReadFile(p); err != nil || string(b) != "hello" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "a.png")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	for p, kind := range map[string]string{dir: "a directory", fifo: "a named pipe", fifoLink: "a named pipe", "/dev/zero": "a device"} {
		if _, err := Stat(p); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), kind) {
			t.Errorf("Stat(%s): %v, want %s, not a regular file", p, err, kind)
		}
		if f, _, err := Open(p); !errors.Is(err, ErrNotRegular) {
			f.Close()
			t.Errorf("Open(%s): %v", p, err)
		}
		if _, err := ReadFile(p); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s): %v", p, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	setLimit(t, 1<<20)
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); !errors.Is(err, ErrExceeded) {
		t.Errorf("a file over the budget: %v", err)
	}
}

// TestReadAllGrowing: the bytes read never exceed the size found first.
func TestReadAllGrowing(t *testing.T) {
	if b, err := readAll(bytes.NewReader([]byte("abc")), nil, 3); err != nil || string(b) != "abc" {
		t.Errorf("exact size: %q, %v", b, err)
	}
	if _, err := readAll(bytes.NewReader([]byte("abcd")), nil, 3); err == nil || !strings.Contains(err.Error(), "grew") {
		t.Errorf("a file longer than its size: %v", err)
	}
	if b, err := readAll(bytes.NewReader([]byte("ab")), nil, 3); err != nil || string(b) != "ab" {
		t.Errorf("a file shorter than its size: %q, %v", b, err)
	}
}

// TestLimitReader: at most n bytes pass; more than n is an error naming the entry, exactly n is EOF.
func TestLimitReader(t *testing.T) {
	if b, err := io.ReadAll(LimitReader(strings.NewReader("12345"), 5, "entry")); err != nil || string(b) != "12345" {
		t.Errorf("exactly n: %q, %v", b, err)
	}
	if b, err := io.ReadAll(LimitReader(strings.NewReader("123"), 5, "entry")); err != nil || string(b) != "123" {
		t.Errorf("fewer than n: %q, %v", b, err)
	}
	b, err := io.ReadAll(LimitReader(strings.NewReader("123456"), 5, "sigma.npy"))
	if err == nil || !strings.Contains(err.Error(), "sigma.npy inflates to more than it declared") || len(b) > 5 {
		t.Errorf("more than n: %d bytes, %v", len(b), err)
	}
}
