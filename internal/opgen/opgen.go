// Command opgen writes the files derived from the op table, tensor/optable.go, so that an op is
// declared once:
//
//   - tensor/ops_gen.go: the OpKind constants in table order, each commented with its row's doc,
//     and their names;
//   - kernels/ops_gen.h: the op codes of the element-wise CUDA kernels (hg_unary: the ClassUnary
//     rows in order; hg_binary and hg_binary_bcast: the ClassBinary rows, then the ClassPair rows);
//   - cuda/opcodes_gen.go: the same codes for the CUDA device's dispatch;
//   - cuda/launch_gen.go: one typed Go launcher per CUDA kernel (HG_KERNEL in kernels/*.cu), with
//     the kernel's C parameter list, so that a launch with the wrong arguments does not compile,
//     and the kernels' PTX parameter types, which the CUDA device checks against the PTX it
//     loads (a stale PTX fails at load time; TestKernelSignatures checks the committed PTX). A
//     kernel declared with HG_KERNEL_SHARED uses dynamic shared memory: its launcher takes the
//     bytes after the grid.
//
// It parses the table's source (go/parser, no type checking), so it runs while the tensor package
// does not compile yet: after a row is added, before its constant exists. Run it with
// 'go generate ./tensor' (or 'make ptx', which then regenerates the PTX); its test fails when a
// committed file differs from what it would write.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// row is what opgen reads of one op table row.
type row struct {
	name  string // without the Op prefix
	doc   string
	class string // ClassUnary, …
}

func main() {
	root, err := repoRoot()
	if err == nil {
		err = write(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "opgen:", err)
		os.Exit(1)
	}
}

// repoRoot is the nearest folder above the working directory that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

// write regenerates every derived file under root, rewriting only those that change.
func write(root string) error {
	files, err := generate(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(root, f.path)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, f.data) {
			continue
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return err
		}
		fmt.Println("opgen: wrote", f.path)
	}
	return nil
}

type file struct {
	path string // relative to the repository root, slash-separated
	data []byte
}

// generate returns the derived files of the op table under root.
func generate(root string) ([]file, error) {
	rows, err := readTable(filepath.Join(root, "tensor", "optable.go"))
	if err != nil {
		return nil, err
	}
	goOps, err := format.Source(opsGo(rows))
	if err != nil {
		return nil, fmt.Errorf("format ops_gen.go: %w", err)
	}
	goCodes, err := format.Source(codesGo(rows))
	if err != nil {
		return nil, fmt.Errorf("format opcodes_gen.go: %w", err)
	}
	ks, err := readKernels(filepath.Join(root, "kernels"))
	if err != nil {
		return nil, err
	}
	goLaunch, err := format.Source(launchGo(ks))
	if err != nil {
		return nil, fmt.Errorf("format launch_gen.go: %w", err)
	}
	return []file{
		{"tensor/ops_gen.go", goOps},
		{"kernels/ops_gen.h", codesC(rows)},
		{"cuda/opcodes_gen.go", goCodes},
		{"cuda/launch_gen.go", goLaunch},
	}, nil
}

// readTable parses the rows of `var opTable = [numOps]opInfo{OpX: {doc: "…", class: ClassY, …}, …}`.
func readTable(path string) ([]row, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "opTable" && len(vs.Values) == 1 {
			lit, _ = vs.Values[0].(*ast.CompositeLit)
		}
		return lit == nil
	})
	if lit == nil {
		return nil, fmt.Errorf("%s: no var opTable = [numOps]opInfo{…}", path)
	}
	var rows []row
	seen := map[string]bool{}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		key, ok2 := kv.Key.(*ast.Ident)
		val, ok3 := kv.Value.(*ast.CompositeLit)
		if !ok || !ok2 || !ok3 || !strings.HasPrefix(key.Name, "Op") {
			return nil, fmt.Errorf("%s: row %s is not OpX: {…}", path, fset.Position(e.Pos()))
		}
		r := row{name: strings.TrimPrefix(key.Name, "Op")}
		if seen[r.name] {
			return nil, fmt.Errorf("%s: %s: Op%s declared twice", path, fset.Position(e.Pos()), r.name)
		}
		seen[r.name] = true
		for _, fe := range val.Elts {
			fkv, ok := fe.(*ast.KeyValueExpr)
			if !ok {
				return nil, fmt.Errorf("%s: %s: Op%s: fields must be named", path, fset.Position(fe.Pos()), r.name)
			}
			switch fkv.Key.(*ast.Ident).Name {
			case "doc":
				bl, ok := fkv.Value.(*ast.BasicLit)
				if !ok || bl.Kind != token.STRING {
					return nil, fmt.Errorf("%s: Op%s: doc must be one string literal", path, r.name)
				}
				r.doc, _ = strconv.Unquote(bl.Value)
			case "class":
				id, ok := fkv.Value.(*ast.Ident)
				if !ok {
					return nil, fmt.Errorf("%s: Op%s: class must be a ClassX constant", path, r.name)
				}
				r.class = id.Name
			}
		}
		if r.doc == "" || r.class == "" {
			return nil, fmt.Errorf("%s: Op%s needs a doc and a class", path, r.name)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// unaryOps and binaryOps are the ops of hg_unary and hg_binary, indexed by op code.
func unaryOps(rows []row) []row { return ofClass(rows, "ClassUnary") }

func binaryOps(rows []row) []row {
	return append(ofClass(rows, "ClassBinary"), ofClass(rows, "ClassPair")...)
}

func ofClass(rows []row, class string) []row {
	var out []row
	for _, r := range rows {
		if r.class == class {
			out = append(out, r)
		}
	}
	return out
}

const header = "// Code generated by internal/opgen from tensor/optable.go. DO NOT EDIT.\n"

func opsGo(rows []row) []byte {
	var b bytes.Buffer
	b.WriteString(header + "\npackage tensor\n\n")
	b.WriteString("// The op list, in the order of the op table (optable.go). Operand conventions (in = inputs,\n// out = destination):\nconst (\n")
	for i, r := range rows {
		typ := ""
		if i == 0 {
			typ = " OpKind = iota"
		}
		fmt.Fprintf(&b, "\tOp%s%s // %s\n", r.name, typ, r.doc)
	}
	b.WriteString("\tnumOps\n)\n\nvar opNames = [numOps]string{\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "\t%q,\n", r.name)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func codesC(rows []row) []byte {
	var b bytes.Buffer
	b.WriteString(header + "//\n// The op codes of the element-wise kernels (elementwise.cu), one per row of the op table that\n" +
		"// they run: hg_unary's are the ClassUnary rows in order, hg_binary's (and hg_binary_bcast's) the\n" +
		"// ClassBinary rows, then the ClassPair rows. cuda/opcodes_gen.go holds the same numbers.\n#pragma once\n")
	for _, fam := range []struct {
		kernel, prefix string
		ops            []row
	}{{"hg_unary", "HG_UNARY_", unaryOps(rows)}, {"hg_binary, hg_binary_bcast", "HG_BINARY_", binaryOps(rows)}} {
		fmt.Fprintf(&b, "\n// %s\n", fam.kernel)
		for i, r := range fam.ops {
			fmt.Fprintf(&b, "#define %s%s %d // %s\n", fam.prefix, r.name, i, r.doc)
		}
		fmt.Fprintf(&b, "#define %sCOUNT %d\n", fam.prefix, len(fam.ops))
	}
	return b.Bytes()
}

func codesGo(rows []row) []byte {
	var b bytes.Buffer
	b.WriteString(header + "\npackage cuda\n\nimport \"holdgo/tensor\"\n\n")
	for _, fam := range []struct {
		name, kernel, prefix string
		ops                  []row
	}{{"unaryCodes", "hg_unary", "HG_UNARY_", unaryOps(rows)}, {"binaryCodes", "hg_binary and hg_binary_bcast", "HG_BINARY_", binaryOps(rows)}} {
		fmt.Fprintf(&b, "// %s are the op codes of %s (kernels/ops_gen.h).\nvar %s = map[tensor.OpKind]int{\n", fam.name, fam.kernel, fam.name)
		for i, r := range fam.ops {
			fmt.Fprintf(&b, "\ttensor.Op%s: %d, // %s%s\n", r.name, i, fam.prefix, r.name)
		}
		b.WriteString("}\n\n")
	}
	return b.Bytes()
}

// kernel is one HG_KERNEL(name)(params) or HG_KERNEL_SHARED(name)(params) of a kernels/*.cu
// family.
type kernel struct {
	name, family string
	params       []param
	shared       bool // HG_KERNEL_SHARED: launched with dynamic shared memory
}

// param is one kernel parameter, or a run of HG_MAX_RANK int parameters x0…x5 taken as one
// [maxRank]int array xs.
type param struct {
	cDecl string // as declared, for the comment
	name  string // Go name
	c     string // C type without const and __restrict__: int, long long, float*, …
	rank  bool   // the run x0…x5
}

// cTypes maps a kernel parameter's C type to its Go type, its args packer (launch.go) and its PTX
// parameter type.
var cTypes = map[string]struct{ goType, pack, ptx string }{
	"int":                {"int", "i32", "u32"},
	"long long":          {"int", "i64", "u64"},
	"unsigned int":       {"uint32", "u32", "u32"},
	"unsigned long long": {"uint64", "u64", "u64"},
	"float":              {"float32", "f32", "f32"},
	"double":             {"float64", "f64", "f64"},
	"float*":             {"uintptr", "ptr", "u64"},
	"int*":               {"uintptr", "ptr", "u64"},
	"double*":            {"uintptr", "ptr64", "u64"}, // checked 8-byte aligned
}

const maxRank = 6 // HG_MAX_RANK

var kernelRE = regexp.MustCompile(`HG_KERNEL(_SHARED)?\((\w+)\)\(([^)]*)\)`)

// readKernels parses every HG_KERNEL declaration of dir/*.cu, sorted by name.
func readKernels(dir string) ([]kernel, error) {
	srcs, err := filepath.Glob(filepath.Join(dir, "*.cu"))
	if err != nil {
		return nil, err
	}
	var ks []kernel
	for _, src := range srcs {
		text, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		for _, m := range kernelRE.FindAllStringSubmatch(string(text), -1) {
			k := kernel{name: m[2], family: filepath.Base(src), shared: m[1] != ""}
			for _, decl := range strings.Split(m[3], ",") {
				decl = strings.Join(strings.Fields(decl), " ")
				f := strings.Fields(strings.NewReplacer("__restrict__", " ", "const ", " ", "*", "* ").Replace(decl))
				if len(f) < 2 {
					return nil, fmt.Errorf("%s: %s: parameter %q has no name", src, k.name, decl)
				}
				c := strings.ReplaceAll(strings.Join(f[:len(f)-1], " "), " *", "*")
				if _, ok := cTypes[c]; !ok {
					return nil, fmt.Errorf("%s: %s: parameter %q: C type %q has no Go launcher type", src, k.name, decl, c)
				}
				k.params = append(k.params, param{cDecl: decl, name: f[len(f)-1], c: c})
			}
			k.params = groupRanks(k.params)
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].name < ks[j].name })
	return ks, nil
}

// groupRanks joins each run of int parameters x0, x1, …, x5 into one rank parameter xs.
func groupRanks(ps []param) []param {
	var out []param
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		if base, ok := strings.CutSuffix(p.name, "0"); ok && p.c == "int" && i+maxRank <= len(ps) {
			run := true
			for j := 1; j < maxRank; j++ {
				if q := ps[i+j]; q.c != "int" || q.name != base+strconv.Itoa(j) {
					run = false
				}
			}
			if run {
				out = append(out, param{cDecl: "int " + base + "0…" + base + strconv.Itoa(maxRank-1), name: base + "s", c: "int", rank: true})
				i += maxRank - 1
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// goName turns hg_group_norm_silu into hgGroupNormSilu.
func goName(c string) string {
	parts := strings.Split(c, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// reserved are the names a kernel parameter must not take in a launcher: the receiver, the grid,
// what the body calls, and Go's keywords.
var reserved = map[string]bool{"dev": true, "grid": true, "args": true, "new": true, "type": true, "func": true,
	"range": true, "map": true, "var": true, "go": true, "default": true, "select": true, "case": true, "chan": true,
	"const": true, "continue": true, "defer": true, "else": true, "for": true, "goto": true, "if": true, "import": true,
	"interface": true, "package": true, "return": true, "struct": true, "switch": true, "break": true, "fallthrough": true}

func launchGo(ks []kernel) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/opgen from kernels/*.cu. DO NOT EDIT.\n\npackage cuda\n\n")
	b.WriteString("// The typed launchers of the CUDA kernels, one per HG_KERNEL of kernels/*.cu, with the kernel's\n" +
		"// parameters in order (a run x0…x5 of ints is one [maxRank]int xs): a call with the wrong arguments\n" +
		"// does not compile. C int arguments are checked to fit 32 bits and double* to be 8-byte aligned\n" +
		"// (args, launch.go).\n\n")
	for _, k := range ks {
		var decls, pack, cdecl []string
		for _, p := range k.params {
			cdecl = append(cdecl, p.cDecl)
			name := p.name
			if reserved[name] {
				name += "_"
			}
			if p.rank {
				decls = append(decls, name+" [maxRank]int")
				pack = append(pack, fmt.Sprintf(".ints(%s[:], 0)", name))
				continue
			}
			t := cTypes[p.c]
			decls = append(decls, name+" "+t.goType)
			pack = append(pack, fmt.Sprintf(".%s(%s)", t.pack, name))
		}
		if k.shared {
			fmt.Fprintf(&b, "// %s launches %s (kernels/%s) with shared bytes of dynamic shared memory:\n//\n//\t%s(%s)\n",
				goName(k.name), k.name, k.family, k.name, strings.Join(cdecl, ", "))
			fmt.Fprintf(&b, "func (dev *Device) %s(grid [3]int, shared int, %s) error {\n", goName(k.name), strings.Join(decls, ", "))
			fmt.Fprintf(&b, "\treturn dev.launchShared(%q, grid, shared, new(args)%s)\n}\n\n", k.name, strings.Join(pack, ""))
			continue
		}
		fmt.Fprintf(&b, "// %s launches %s (kernels/%s):\n//\n//\t%s(%s)\n", goName(k.name), k.name, k.family, k.name, strings.Join(cdecl, ", "))
		fmt.Fprintf(&b, "func (dev *Device) %s(grid [3]int, %s) error {\n", goName(k.name), strings.Join(decls, ", "))
		fmt.Fprintf(&b, "\treturn dev.launch(%q, grid, new(args)%s)\n}\n\n", k.name, strings.Join(pack, ""))
	}
	b.WriteString("// kernelParams are the PTX parameter types of every kernel, as its launcher packs them; the\n" +
		"// device checks them against the PTX it loads (checkKernelParams).\nvar kernelParams = map[string]string{\n")
	for _, k := range ks {
		var ptx []string
		for _, p := range k.params {
			n := 1
			if p.rank {
				n = maxRank
			}
			for range n {
				ptx = append(ptx, cTypes[p.c].ptx)
			}
		}
		fmt.Fprintf(&b, "\t%q: %q,\n", k.name, strings.Join(ptx, " "))
	}
	b.WriteString("}\n")
	return b.Bytes()
}
