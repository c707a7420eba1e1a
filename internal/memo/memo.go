// Package memo is a fixed-size memo of what is computed from short
// strings that repeat: a word's stem, a piece of text's tokens. A key has
// one slot, chosen by its hash, and a new key takes the slot over, so the
// memo keeps its size however many new keys a long-lived process reads,
// and reading it takes no lock.
package memo

import (
	"hash/maphash"
	"sync/atomic"
)

// Slots memoises values of type V by string key; safe for concurrent use.
type Slots[V any] struct {
	slots []atomic.Pointer[entry[V]]
	seed  maphash.Seed
}

type entry[V any] struct {
	key string
	val V
}

// New returns a memo of n slots.
func New[V any](n int) *Slots[V] {
	return &Slots[V]{slots: make([]atomic.Pointer[entry[V]], n), seed: maphash.MakeSeed()}
}

// Get returns key's value, if the memo holds it.
func (m *Slots[V]) Get(key string) (V, bool) {
	return m.at(m.slot(maphash.String(m.seed, key)), key)
}

// GetBytes is Get for a key held as bytes, which it does not copy.
func (m *Slots[V]) GetBytes(key []byte) (V, bool) {
	return m.at(m.slot(maphash.Bytes(m.seed, key)), string(key))
}

// Put remembers key's value, in place of whatever held its slot. The
// memo keeps key itself: a key cut from a larger string should be a copy
// (strings.Clone), so the memo does not keep that string alive.
func (m *Slots[V]) Put(key string, v V) {
	m.slot(maphash.String(m.seed, key)).Store(&entry[V]{key: key, val: v})
}

func (m *Slots[V]) slot(h uint64) *atomic.Pointer[entry[V]] {
	return &m.slots[h%uint64(len(m.slots))]
}

func (m *Slots[V]) at(slot *atomic.Pointer[entry[V]], key string) (V, bool) {
	if e := slot.Load(); e != nil && e.key == key {
		return e.val, true
	}
	var zero V
	return zero, false
}
