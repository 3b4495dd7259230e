package main

import (
	"go/token"
	"strings"
	"testing"
)

// TestCheck: each bad snippet is reported (and -fix rewrites it into a form that is then clean), each
// good one is not.
func TestCheck(t *testing.T) {
	const head = "package p\n\nimport (\n\t\"math\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) {\n\tvar a, b, tol, got, lo float64\n\tvar xs []float64\n\tvar n int\n\t_, _, _, _, _, _, _ = a, b, tol, got, lo, xs, n\n"
	bad := map[string]string{
		"abs":          "if math.Abs(a-b) > tol {\n\t\tt.Errorf(\"x\")\n\t}",
		"init":         "if e := math.Abs(a - b); e > 1e-9 {\n\t\tt.Error(\"x\")\n\t}",
		"tol name":     "if got > tol {\n\t\tt.Fatal(\"x\")\n\t}",
		"lower bound":  "if got < 0.5 {\n\t\tt.Fatalf(\"x\")\n\t}",
		"or":           "if got < lo || got >= 1.0 {\n\t\tt.Errorf(\"x\")\n\t}",
		"and":          "if n > 0 && got > 2*tol {\n\t\tt.Errorf(\"x\")\n\t}",
		"paren":        "if (got >= 1e-3) {\n\t\tt.Errorf(\"x\")\n\t}",
		"conversion":   "if float64(n) > got {\n\t\tt.Fail()\n\t}",
		"helper recvr": "var tb testing.TB = t\n\tif got > tol {\n\t\ttb.Errorf(\"x\")\n\t}",
	}
	good := map[string]string{
		"negated":        "if !(math.Abs(a-b) <= tol) {\n\t\tt.Errorf(\"x\")\n\t}",
		"negated init":   "if e := math.Abs(a - b); !(e <= 1e-9) {\n\t\tt.Error(\"x\")\n\t}",
		"ints":           "if n > 3 {\n\t\tt.Errorf(\"x\")\n\t}",
		"len of floats":  "if len(xs) > 0 {\n\t\tt.Errorf(\"%v\", 1e-4)\n\t}",
		"no failure":     "if got > tol {\n\t\tt.Logf(\"x\")\n\t}",
		"guard":          "if got > tol {\n\t\tif n == 0 {\n\t\t\tt.Errorf(\"x\")\n\t\t}\n\t}",
		"equality":       "if got != 1.5 {\n\t\tt.Errorf(\"x\")\n\t}",
		"isnan":          "if math.IsNaN(got) || !(got <= tol) {\n\t\tt.Errorf(\"x\")\n\t}",
		"marked integer": "if n > tol2 { // nancheck:ok\n\t\tt.Errorf(\"x\")\n\t}",
	}
	for name, body := range bad {
		src := head + "\t" + body + "\n}\n"
		got, fixed, err := check(token.NewFileSet(), "x_test.go", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, src)
		}
		if len(got) != 1 && !(name == "or" && len(got) == 2) {
			t.Errorf("bad %q: %d findings %v, want 1", name, len(got), got)
		}
		again, _, err := check(token.NewFileSet(), "x_test.go", fixed)
		if err != nil || len(again) != 0 || !strings.Contains(string(fixed), "!(") {
			t.Errorf("bad %q: the fix\n%s\nstill reports %v (%v)", name, fixed, again, err)
		}
	}
	for name, body := range good {
		src := head + "\tvar tol2 int\n\t_ = tol2\n\t" + body + "\n}\n"
		got, _, err := check(token.NewFileSet(), "x_test.go", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, src)
		}
		if len(got) != 0 {
			t.Errorf("good %q reported: %v", name, got)
		}
	}
}
