package tensor

// Pool recycles tensor storage so that a training loop allocates no tensor
// memory once warm: Get hands out a tensor, Release returns everything
// handed out since the last Release. Not safe for concurrent use.
type Pool struct {
	dev   Device
	free  map[int][]*Tensor // by element count
	inUse []*Tensor
}

// NewPool returns a pool of tensors on dev.
func NewPool(dev Device) *Pool { return &Pool{dev: dev, free: map[int][]*Tensor{}} }

// Get returns a tensor of the given shape. Its contents are undefined unless
// zero is set.
func (p *Pool) Get(zero bool, shape ...int) *Tensor {
	n := numel(shape)
	var t *Tensor
	if list := p.free[n]; len(list) > 0 {
		t = list[len(list)-1]
		p.free[n] = list[:len(list)-1]
		t.shape = append(t.shape[:0], shape...)
		t.err = nil
		if zero {
			Fill(t, 0)
		}
	} else {
		t = newOn(p.dev, shape) // new storage is zeroed
	}
	p.inUse = append(p.inUse, t)
	return t
}

// Release makes every tensor handed out since the last Release reusable.
// The caller must hold no references to them any more.
func (p *Pool) Release() {
	for _, t := range p.inUse {
		if t.buf == nil && t.data == nil { // its allocation failed
			continue
		}
		n := t.Len()
		p.free[n] = append(p.free[n], t)
	}
	clear(p.inUse)
	p.inUse = p.inUse[:0]
}
