package tensor

import (
	"slices"
	"unsafe"
)

// Pool recycles tensor storage so that a training loop allocates no tensor
// memory once warm: Get hands out a tensor, Put returns one early (the tape
// does this during the backward pass for values no later step reads), and
// Release returns everything still handed out. Storage is reused by exact
// element count. Not safe for concurrent use.
type Pool struct {
	dev   Device
	free  map[int][]*Tensor // by element count
	inUse []*Tensor         // handed out since the last Release; nil where Put
	where map[any]int       // storage (see storage) → its index in inUse
	bytes int64             // storage the pool owns, handed out or free
}

// NewPool returns a pool of tensors on dev.
func NewPool(dev Device) *Pool {
	return &Pool{dev: dev, free: map[int][]*Tensor{}, where: map[any]int{}}
}

// Storage identifies the memory behind t: equal for t and its views
// (Reshape), distinct for separate allocations, nil for a tensor without
// storage. It is a comparable key, not a handle.
func (t *Tensor) Storage() any { return storage(t) }

func storage(t *Tensor) any {
	if t.buf != nil {
		return t.buf
	}
	if len(t.data) == 0 {
		return nil
	}
	return unsafe.SliceData(t.data)
}

// Get returns a tensor of the given shape. Its contents are undefined unless
// zero is set.
func (p *Pool) Get(zero bool, shape ...int) *Tensor {
	n := numel(shape)
	var t *Tensor
	if list := p.free[n]; len(list) > 0 {
		t = list[len(list)-1]
		list[len(list)-1] = nil
		p.free[n] = list[:len(list)-1]
		t.shape = append(t.shape[:0], shape...)
		t.err = nil
		if zero {
			Fill(t, 0)
		}
	} else {
		t = newOn(p.dev, shape) // new storage is zeroed
		if t.buf != nil || t.data != nil {
			p.bytes += 4 * int64(n)
		}
	}
	if s := storage(t); s != nil {
		p.where[s] = len(p.inUse)
	}
	p.inUse = append(p.inUse, t)
	return t
}

// Put makes the storage of t (a tensor Get handed out since the last
// Release, or a view of one) reusable now and reports whether it was the
// pool's. The caller must hold no references to it any more.
func (p *Pool) Put(t *Tensor) bool {
	s := storage(t)
	if s == nil {
		return false
	}
	i, ok := p.where[s]
	if !ok {
		return false
	}
	delete(p.where, s)
	own := p.inUse[i]
	p.inUse[i] = nil
	// The storage goes back in a new Tensor: the old one may still describe
	// a value (its shape), and Get reshapes what it hands out.
	n := own.Len()
	p.free[n] = append(p.free[n], &Tensor{shape: slices.Clone(own.shape), data: own.data, buf: own.buf})
	return true
}

// Owns reports whether t's storage was handed out by Get since the last
// Release and not Put back.
func (p *Pool) Owns(t *Tensor) bool {
	s := storage(t)
	if s == nil {
		return false
	}
	_, ok := p.where[s]
	return ok
}

// Mark returns a position in the sequence of tensors handed out; Since
// lists those handed out after it.
func (p *Pool) Mark() int { return len(p.inUse) }

// Since returns the tensors handed out after mark and not Put yet (nil
// entries where they were); valid until the next Get, Put or Release.
func (p *Pool) Since(mark int) []*Tensor { return p.inUse[mark:] }

// Bytes is the storage the pool owns (handed out or free): the high-water
// mark of its tensor memory, since a pool never gives memory back.
func (p *Pool) Bytes() int64 { return p.bytes }

// Release makes every tensor handed out since the last Release reusable.
// The caller must hold no references to them any more.
func (p *Pool) Release() {
	for _, t := range p.inUse {
		if t == nil || (t.buf == nil && t.data == nil) { // Put already, or its allocation failed
			continue
		}
		n := t.Len()
		p.free[n] = append(p.free[n], t)
	}
	clear(p.inUse)
	p.inUse = p.inUse[:0]
	clear(p.where)
}
