package restore

import "testing"

// TestCheckOperator: replacement and RePaint take masks and the identity (s = 1), not pooling or the
// blur; the other methods take every operator.
func TestCheckOperator(t *testing.T) {
	mask, err := NewMask(16, []int{0, 3, 7})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewPool(1, 4, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	blur, err := NewBlur(1, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []Operator{mask, pool, blur, NewIdentity(16)} {
		for _, name := range []string{MethodReplace, MethodRepaint, MethodDDNM, MethodPiGDM, MethodDPS} {
			err := Method{Name: name}.CheckOperator(op)
			wantErr := (name == MethodReplace || name == MethodRepaint) && (op == Operator(pool) || op == Operator(blur))
			if (err != nil) != wantErr {
				t.Errorf("%s on %T: error %v, want one: %v", name, op, err, wantErr)
			}
		}
	}
}
