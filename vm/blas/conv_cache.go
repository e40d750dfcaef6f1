package blas

import (
	"bytes"
	"sync"
	"unsafe"
)

// ConvWeightCache keeps packed convolution weights so that running a
// model again with the same weight tensors does not repack them.
//
// An entry is keyed by the identity of the weight slice (its first
// element's address and its length) and the weight geometry. Identity
// alone is not enough: the same memory can later hold other values (a
// tensor freed and reallocated, a parameter overwritten in place), so a
// hit is confirmed by comparing the weights bitwise with the copy taken
// when they were packed. The rule is therefore exact: packed weights are
// reused if and only if the weights are bit-for-bit those that were
// packed; anything else repacks and replaces the entry. The comparison
// is a memcmp of the weights, far cheaper than packing (a strided
// gather) and negligible next to the convolution itself. Constant
// weights of an executable are packed once per load of the kernel that
// owns the cache.
type ConvWeightCache struct {
	mu      sync.Mutex
	entries [convCacheSize]convCacheEntry
	next    int // round-robin replacement
}

const convCacheSize = 8

type convCacheEntry struct {
	ptr  *float32
	n    int
	key  convWeightKey
	orig []float32
	pw   *ConvWeights
}

type convWeightKey struct {
	groups, outC, inC, spatial int
	kernel                     [3]int
	wo, wi                     int
	ws                         [3]int
	pixelRows                  bool // the packing's form
}

func weightKey(g *ConvGeom) convWeightKey {
	return convWeightKey{g.Groups, g.OutC, g.InC, g.Spatial, g.Kernel, g.WO, g.WI, g.WS, g.pixelRows()}
}

func f32Bytes(s []float32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}

// PacksWeights reports whether convolutions of geometry g run on packed
// weights (PackConvWeights); depthwise ones read the weights as stored.
func (g *ConvGeom) PacksWeights() bool { return !g.depthwise() }

// Fits reports whether pw holds weights packed for geometry g (the
// weight-related fields agree).
func (pw *ConvWeights) Fits(g *ConvGeom) bool { return weightKey(&pw.geom) == weightKey(g) }

// Get returns w packed for geometry g, packing it on a miss. Safe for
// concurrent use.
func (c *ConvWeightCache) Get(g *ConvGeom, w []float32) *ConvWeights {
	if g.depthwise() {
		return nil // the direct path reads w as it is
	}
	if len(w) == 0 {
		return PackConvWeights(g, w)
	}
	key := weightKey(g)
	c.mu.Lock()
	for i := range c.entries {
		e := &c.entries[i]
		if e.ptr == &w[0] && e.n == len(w) && e.key == key && bytes.Equal(f32Bytes(e.orig), f32Bytes(w)) {
			pw := e.pw
			c.mu.Unlock()
			return pw
		}
	}
	c.mu.Unlock()
	pw := PackConvWeights(g, w)
	orig := append([]float32(nil), w...)
	c.mu.Lock()
	c.entries[c.next] = convCacheEntry{ptr: &w[0], n: len(w), key: key, orig: orig, pw: pw}
	c.next = (c.next + 1) % convCacheSize
	c.mu.Unlock()
	return pw
}
