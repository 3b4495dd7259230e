package tensor

import (
	"sync"
	"sync/atomic"
)

// Frozen tensors.
//
// A network that only samples runs the same weights through hundreds of forward passes, and a 3×3
// convolution on the Winograd path first turns its weight (CO × CI × 3 × 3) into α² matrices
// U[ξ] = (G w Gᵀ)[ξ] — for F(4,3) four times the weight's size, written to memory on every call. On
// ncsnpp-cifar10 (107.6 M parameters) that transform was 17 % of a forward pass (one thread,
// AVX-512, batch 4: 219 → 190 ms per image without it).
//
// Freeze declares a tensor's values fixed: operations may then keep the forms they derive from it and
// reuse them on every later call. Thaw drops them. The forms are keyed by what they depend on (the
// algorithm and the weight's orientation), so a frozen weight serves the forward pass and the input
// gradient (a likelihood's vector–Jacobian products) alike.

// frozenForms is what operations keep of a frozen tensor.
type frozenForms struct {
	mu    sync.Mutex
	forms map[any][]float32
	bytes int64 // counted against frozenBudget
}

// FrozenBudget is the most memory, in bytes, that the forms kept for frozen tensors may hold in all;
// past it operations derive their forms on every call, as for a tensor that is not frozen. The
// default, 2 GiB, holds ncsnpp-cifar10's transformed weights (1.6 GiB).
var FrozenBudget atomic.Int64

func init() { FrozenBudget.Store(2 << 30) }

// frozenBytes is the memory the kept forms hold now.
var frozenBytes atomic.Int64

// Freeze declares t's values fixed until Thaw(t): operations on the host may keep the forms they
// derive from t (a 3×3 convolution's Winograd-transformed weight) and reuse them instead of deriving
// them again. Writing to a frozen tensor's data (through Data, or as an operation's destination)
// leaves those forms stale: Thaw it first. Freeze and Thaw must not run concurrently with operations
// on t; operations on a frozen t may run concurrently with each other.
func Freeze(t *Tensor) {
	if t.frozen == nil {
		t.frozen = &frozenForms{}
	}
}

// Thaw undoes Freeze(t) and releases the forms kept for t.
func Thaw(t *Tensor) {
	if f := t.frozen; f != nil {
		f.mu.Lock()
		frozenBytes.Add(-f.bytes)
		f.forms, f.bytes = nil, 0
		f.mu.Unlock()
		t.frozen = nil
	}
}

// Frozen reports whether t is frozen (Freeze).
func (t *Tensor) Frozen() bool { return t.frozen != nil }

// frozenForm returns the form of t kept under key, making it with make(n) and fill on the first call;
// ok is false when t is not frozen or the form does not fit FrozenBudget (the caller then derives
// its own). Concurrent first calls for one key make the form once.
func frozenForm(t *Tensor, key any, n int, fill func(dst []float32)) (form []float32, ok bool) {
	f := t.frozen
	if f == nil {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if form, ok := f.forms[key]; ok {
		return form, true
	}
	size := 4 * int64(n)
	if frozenBytes.Add(size) > FrozenBudget.Load() {
		frozenBytes.Add(-size)
		return nil, false
	}
	form = make([]float32, n)
	fill(form)
	if f.forms == nil {
		f.forms = map[any][]float32{}
	}
	f.forms[key] = form
	f.bytes += size
	return form, true
}
