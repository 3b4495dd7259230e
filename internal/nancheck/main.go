// Command nancheck finds tolerance checks in test code that pass when the measured value is NaN.
//
// A comparison with NaN is false, so a test written as
//
//	if e := math.Abs(got - want); e > tol {
//		t.Errorf(…)
//	}
//
// passes when got is NaN: a sampler writing NaN everywhere passes it. The project's convention is the
// negated form, which fails on NaN:
//
//	if e := math.Abs(got - want); !(e <= tol) {
//
// The rule (syntactic, no type information, so that it runs in a second over the tree): in a
// *_test.go file, an if statement whose body calls a test failure (X.Error, X.Errorf, X.Fatal,
// X.Fatalf, X.Fail, X.FailNow) and whose condition holds an ordered comparison (<, <=, >, >=) reached
// through &&, || and parentheses only (not under a !) with an operand that looks like a float: a float
// literal, a call or value of package math, a name with tol or eps in it, or a name the if's own
// initialiser assigns from such an expression. A comparison of integers that matches (rare) is
// accepted with a comment "nancheck:ok" on the line of the if.
//
// Usage: nancheck FILE… (make lint passes the repository's *_test.go files). It prints one line per
// finding, file:line:col: message, and exits 1 when there is any.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

func main() {
	fset := token.NewFileSet()
	var found int
	args, fix := os.Args[1:], false
	if len(args) > 0 && args[0] == "-fix" {
		args, fix = args[1:], true
	}
	for _, path := range args {
		if !strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "nancheck:", err)
			os.Exit(2)
		}
		findings, fixed, err := check(fset, path, src)
		if err != nil {
			fmt.Fprintln(os.Stderr, "nancheck:", err)
			os.Exit(2)
		}
		if fix && len(findings) > 0 {
			if err := os.WriteFile(path, fixed, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "nancheck:", err)
				os.Exit(2)
			}
			continue
		}
		for _, f := range findings {
			fmt.Println(f)
		}
		found += len(findings)
	}
	if found > 0 {
		fmt.Fprintf(os.Stderr, "nancheck: %d tolerance checks pass on NaN; write them as if !(x <= tol) (or mark an integer comparison // nancheck:ok)\n", found)
		os.Exit(1)
	}
}

// check returns the NaN-passing tolerance checks of one test file as "file:line:col: message", and
// the source with each written in the negated form (nancheck -fix).
func check(fset *token.FileSet, path string, src []byte) (findings []string, fixed []byte, err error) {
	file, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	okLines := map[int]bool{}
	for _, g := range file.Comments {
		for _, c := range g.List {
			if strings.Contains(c.Text, "nancheck:ok") {
				okLines[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	var edits []*ast.BinaryExpr
	ast.Inspect(file, func(n ast.Node) bool {
		st, ok := n.(*ast.IfStmt)
		if !ok || !failsTest(st.Body) || okLines[fset.Position(st.Pos()).Line] {
			return true
		}
		floats := initFloats(st.Init)
		for _, cmp := range nanPassing(st.Cond) {
			if looksFloat(cmp.X, floats) || looksFloat(cmp.Y, floats) {
				findings = append(findings, fmt.Sprintf("%s: %s passes when a side is NaN; write !(%s)",
					fset.Position(cmp.Pos()), render(fset, src, cmp), negated(fset, src, cmp)))
				edits = append(edits, cmp)
			}
		}
		return true
	})
	fixed = src
	for i := len(edits) - 1; i >= 0; i-- { // in source order, so from the end the offsets hold
		cmp := edits[i]
		start, end := fset.Position(cmp.Pos()).Offset, fset.Position(cmp.End()).Offset
		repl := "!(" + negated(fset, src, cmp) + ")"
		fixed = append(append(append([]byte(nil), fixed[:start]...), repl...), fixed[end:]...)
	}
	return findings, fixed, nil
}

// failsTest reports whether one of a block's own statements is a call of X.Error, X.Errorf, X.Fatal,
// X.Fatalf, X.Fail or X.FailNow: the block is a check's failure branch (a block that only reaches a
// failure through a nested if is a guard, not a check).
func failsTest(body *ast.BlockStmt) bool {
	for _, st := range body.List {
		es, ok := st.(*ast.ExprStmt)
		if !ok {
			continue
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok {
			continue
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow":
				return true
			}
		}
	}
	return false
}

// nanPassing returns the ordered comparisons of a condition that are reached through &&, || and
// parentheses only: each is false on NaN, so the failure branch is skipped.
func nanPassing(e ast.Expr) []*ast.BinaryExpr {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return nanPassing(e.X)
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND, token.LOR:
			return append(nanPassing(e.X), nanPassing(e.Y)...)
		case token.GTR, token.GEQ, token.LSS, token.LEQ:
			return []*ast.BinaryExpr{e}
		}
	}
	return nil
}

// initFloats returns the names an if statement's initialiser assigns from float-looking expressions.
func initFloats(init ast.Stmt) map[string]bool {
	out := map[string]bool{}
	as, ok := init.(*ast.AssignStmt)
	if !ok {
		return out
	}
	for i, lhs := range as.Lhs {
		id, ok := lhs.(*ast.Ident)
		if !ok {
			continue
		}
		rhs := as.Rhs[0]
		if len(as.Rhs) == len(as.Lhs) {
			rhs = as.Rhs[i]
		}
		if looksFloat(rhs, nil) {
			out[id.Name] = true
		}
	}
	return out
}

// looksFloat reports whether an expression looks like a float: a float literal, package math, a
// conversion to float64 or float32, a name with tol or eps in it, or one of the given names. The
// arguments of other calls are not looked at (len(xs) > 0 is not a float because xs holds 1e-4).
func looksFloat(e ast.Expr, floats map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			switch fun := n.Fun.(type) {
			case *ast.SelectorExpr:
				if x, ok := fun.X.(*ast.Ident); ok && x.Name == "math" {
					found = true
				}
			case *ast.Ident:
				found = found || fun.Name == "float64" || fun.Name == "float32"
			}
			return false
		case *ast.BasicLit:
			found = found || n.Kind == token.FLOAT
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "math" {
				found = true
			}
		case *ast.Ident:
			name := strings.ToLower(n.Name)
			found = found || floats[n.Name] || strings.Contains(name, "tol") || strings.Contains(name, "eps")
		}
		return !found
	})
	return found
}

var negatedOp = map[token.Token]token.Token{token.GTR: token.LEQ, token.GEQ: token.LSS, token.LSS: token.GEQ, token.LEQ: token.GTR}

func render(fset *token.FileSet, src []byte, e ast.Expr) string {
	return string(src[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
}

// negated returns the comparison with the opposite operator: x > tol gives x <= tol.
func negated(fset *token.FileSet, src []byte, cmp *ast.BinaryExpr) string {
	return render(fset, src, cmp.X) + " " + negatedOp[cmp.Op].String() + " " + render(fset, src, cmp.Y)
}
