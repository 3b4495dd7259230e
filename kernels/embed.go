// Package kernels holds holdgo's CUDA C kernels (one family per .cu file) and the PTX that nvcc
// generates from them for sm_80 and sm_90, committed and embedded so that a GPU build needs no
// CUDA compiler: the cuda package loads the PTX with the driver's JIT.
//
// Regenerate the PTX with 'make -C kernels ptx'; 'kernels/ci.sh' checks that it is up to date,
// assembles it with ptxas and runs every kernel on the CPU through the host shim (shim/).
package kernels

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed ptx/sm_80/*.ptx ptx/sm_90/*.ptx
var ptxFS embed.FS

// Archs lists the architectures with committed PTX, oldest first.
var Archs = []int{80, 90}

// PTX returns the PTX modules for sm_<arch> by family name ("elementwise", "sgemm", …).
func PTX(arch int) (map[string]string, error) {
	dir := fmt.Sprintf("ptx/sm_%d", arch)
	entries, err := fs.ReadDir(ptxFS, dir)
	if err != nil {
		return nil, fmt.Errorf("kernels: no PTX for sm_%d: %w", arch, err)
	}
	mods := make(map[string]string, len(entries))
	for _, e := range entries {
		b, err := ptxFS.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		mods[strings.TrimSuffix(e.Name(), ".ptx")] = string(b)
	}
	return mods, nil
}

// ArchFor picks the newest committed PTX architecture not newer than the device's compute
// capability major·10+minor (PTX JIT-compiles forward, never backward).
func ArchFor(capability int) (int, error) {
	best := 0
	for _, a := range Archs {
		if a <= capability {
			best = a
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("kernels: compute capability %d.%d is older than sm_%d", capability/10, capability%10, Archs[0])
	}
	return best, nil
}

// Entries returns the kernel names (.entry directives) of a PTX module, sorted.
func Entries(ptx string) []string {
	var names []string
	for _, line := range strings.Split(ptx, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, ".visible .entry "); ok {
			if i := strings.IndexByte(rest, '('); i > 0 {
				names = append(names, rest[:i])
			}
		}
	}
	sort.Strings(names)
	return names
}

// Params returns the parameter types of every kernel of a PTX module (".u32", ".f64", … without
// the dot), by kernel name.
func Params(ptx string) map[string][]string {
	out := map[string][]string{}
	var cur string
	for _, line := range strings.Split(ptx, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, ".visible .entry "); ok {
			cur = ""
			if i := strings.IndexByte(rest, '('); i > 0 {
				cur = rest[:i]
				out[cur] = []string{}
			}
			continue
		}
		if cur == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, ".param ."); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				out[cur] = append(out[cur], f[0])
			}
			continue
		}
		if strings.HasPrefix(line, ")") {
			cur = ""
		}
	}
	return out
}
