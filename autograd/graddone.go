package autograd

// Gradient-completion hooks: data-parallel training starts summing a
// parameter's gradient over the ranks as soon as the backward sweep has made
// its last contribution to it, while the sweep goes on (train's bucketed
// reduction). A value's gradient is final once the sweep has run the closure
// of the lowest-indexed node that has it as an input: nodes are in
// topological order and the sweep runs backwards, so no later closure adds
// into it.

// gradHook is the pending hook of the next sweep (OnGradDone).
type gradHook struct {
	vals []*Value
	done func(k int)
}

// OnGradDone asks the next backward sweep to call done(k) once the gradient of
// vals[k] is final: right after the closure of the last node (in sweep order)
// that adds into it, or before the first closure for a value no node of the
// sweep reads. Each k is reported once, in the order the sweep finishes them
// (the values a node finishes together from the highest k down, which is the
// backward order of parameters laid out in forward order); a value of vals
// that is not an input of any node swept is reported first.
// The hook holds for one sweep (Reset clears it).
func (g *Tape) OnGradDone(vals []*Value, done func(k int)) {
	g.hook = &gradHook{vals: vals, done: done}
}

// hookPlan returns, for each node index i ≤ start, the hooked values whose
// gradient is final after node i's closure, and the values read by no node
// (final before the sweep).
func (h *gradHook) plan(nodes []*Value, start int) (after [][]int, before []int) {
	pos := make(map[*Value]int, len(h.vals))
	for k, v := range h.vals {
		pos[v] = k
	}
	last := make([]int, len(h.vals))
	for k := range last {
		last[k] = -1
	}
	for i := start; i >= 0; i-- {
		for _, in := range nodes[i].inputs {
			if k, ok := pos[in]; ok {
				last[k] = i // the lowest index wins: the sweep's last visit
			}
		}
	}
	after = make([][]int, start+1)
	for k := len(last) - 1; k >= 0; k-- { // the last of a node's values first, as its parameters are laid out
		i := last[k]
		if i < 0 {
			before = append(before, k)
		} else {
			after[i] = append(after[i], k)
		}
	}
	return after, before
}
