// Command opgen writes the files derived from the op table, tensor/optable.go, so that an op is
// declared once:
//
//   - tensor/ops_gen.go: the OpKind constants in table order, each commented with its row's doc,
//     and their names;
//   - kernels/ops_gen.h: the op codes of the element-wise CUDA kernels (hg_unary: the ClassUnary
//     rows in order; hg_binary and hg_binary_bcast: the ClassBinary rows, then the ClassPair rows);
//   - cuda/opcodes_gen.go: the same codes for the CUDA device's dispatch.
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
	return []file{
		{"tensor/ops_gen.go", goOps},
		{"kernels/ops_gen.h", codesC(rows)},
		{"cuda/opcodes_gen.go", goCodes},
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
