package memo

import (
	"fmt"
	"sync"
	"testing"
)

func TestSlots(t *testing.T) {
	m := New[int](4)
	if _, ok := m.Get("a"); ok {
		t.Fatal("an empty memo holds a")
	}
	m.Put("apple", 5)
	if v, ok := m.Get("apple"); !ok || v != 5 {
		t.Fatalf("Get(apple) = %d, %v", v, ok)
	}
	if v, ok := m.GetBytes([]byte("apple")); !ok || v != 5 {
		t.Fatalf("GetBytes(apple) = %d, %v: a key as bytes must find its string", v, ok)
	}
	// More keys than slots: each found is its own value, never another's.
	for i := range 100 {
		m.Put(fmt.Sprint("k", i), i)
	}
	for i := range 100 {
		if v, ok := m.Get(fmt.Sprint("k", i)); ok && v != i {
			t.Fatalf("k%d holds %d", i, v)
		}
	}
}

func TestSlotsConcurrent(t *testing.T) {
	m := New[string](16)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				k := fmt.Sprint(i % 50)
				if v, ok := m.Get(k); ok && v != "v"+k {
					t.Errorf("goroutine %d: %s holds %s", g, k, v)
					return
				}
				m.Put(k, "v"+k)
			}
		})
	}
	wg.Wait()
}
