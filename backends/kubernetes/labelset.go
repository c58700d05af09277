package kubernetes

import "slices"

// labelSet is a cached pod's labels, compactly: the sorted keys, kept once for every pod with
// the same keys (a chart gives all its pods of one service the same), and the values in key
// order. As a map, an agent-env pod's dozen labels took ~700 bytes (a map past eight entries
// grows a table); at 50,000 pods the labels were the largest part of the heap.
type labelSet struct {
	keys []string // shared: never modified
	vals []string
}

// get is the value of label k ("" when the pod has no such label).
func (l labelSet) get(k string) string {
	if i, ok := slices.BinarySearch(l.keys, k); ok {
		return l.vals[i]
	}
	return ""
}

// has reports whether the pod has label k with value v.
func (l labelSet) has(k, v string) bool {
	i, ok := slices.BinarySearch(l.keys, k)
	return ok && l.vals[i] == v
}

// labelSet builds in's label set, its keys and values interned. The pod informer calls it for
// every pod it decodes: a key set already seen costs no allocation but the values.
func (t *specTable) labelSet(in map[string]string) labelSet {
	if len(in) == 0 {
		return labelSet{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	scratch := t.keyScratch[:0]
	for k := range in {
		scratch = append(scratch, k)
	}
	slices.Sort(scratch)
	t.keyScratch = scratch
	keys := t.keySet(scratch)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = t.str(in[k])
	}
	return labelSet{keys: keys, vals: vals}
}

// keySet returns the shared copy of the sorted keys (t.mu held; keys is scratch).
func (t *specTable) keySet(keys []string) []string {
	id := t.keyID[:0]
	for _, k := range keys {
		id = append(append(id, k...), 0)
	}
	t.keyID = id
	return t.sharedKeys(id, len(keys), func(i int) string { return t.str(keys[i]) })
}

// sharedKeys returns the shared key set whose id is the keys joined, each ended by a 0; when it
// is new, it is made of the n keys key(i) gives (t.mu held).
func (t *specTable) sharedKeys(id []byte, n int, key func(i int) string) []string {
	if shared, ok := t.keySets[string(id)]; ok {
		return shared
	}
	shared := make([]string, n)
	for i := range shared {
		shared[i] = key(i)
	}
	if len(t.keySets) >= maxSpecs {
		clear(t.keySets)
	}
	t.keySets[string(id)] = shared
	return shared
}
