package tensor

import (
	"slices"
	"testing"
)

func TestShapeErrorsPanicWithMessage(t *testing.T) {
	cases := map[string]func(){
		"Add":     func() { Add(nil, Zeros(2, 3), Zeros(3, 2)) },
		"MatMul":  func() { MatMul(nil, Zeros(2, 3), Zeros(2, 3), false, false) },
		"Reshape": func() { Zeros(2, 3).Reshape(4, 2) },
		"Slice":   func() { Slice(nil, Zeros(2, 3), 1, 2, 5) },
		"Gather":  func() { Gather(nil, Zeros(2, 3), []int{2}) },
		"Dest":    func() { Exp(Zeros(3), Zeros(2)) },
	}
	for name, f := range cases {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					t.Errorf("%s: no panic on a shape error", name)
				} else if s, ok := r.(string); !ok || len(s) < 10 {
					t.Errorf("%s: unhelpful panic %v", name, r)
				}
			}()
			f()
		}()
	}
}

func TestReshapeIsAView(t *testing.T) {
	a := RandN(NewRNG(1), 2, 6)
	b := a.Reshape(3, -1)
	if !slices.Equal(b.Shape(), []int{3, 4}) {
		t.Fatalf("inferred shape %v", b.Shape())
	}
	b.Data()[5] = 42
	if a.Data()[5] != 42 {
		t.Fatal("Reshape copied the storage")
	}
}

func TestPoolReusesStorage(t *testing.T) {
	p := NewPool(CPU)
	a := p.Get(false, 4, 8)
	a.Data()[0] = 3
	p.Release()
	b := p.Get(true, 8, 4)
	if &a.Data()[0] != &b.Data()[0] {
		t.Fatal("pool did not reuse the released tensor")
	}
	if b.Data()[0] != 0 {
		t.Fatal("Get(zero=true) returned dirty storage")
	}
	allocs := testing.AllocsPerRun(100, func() {
		p.Get(false, 32, 32)
		p.Release()
	})
	if allocs > 0 {
		t.Fatalf("warm pool allocates %v times per Get/Release", allocs)
	}
}
