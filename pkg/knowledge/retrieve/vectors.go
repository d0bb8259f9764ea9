package retrieve

import (
	"cmp"
	"container/heap"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
)

// vectorSet is one generation of a base's vectors, quantised: each vector
// is scaled so its largest component is ±127 and rounded to int8, its
// scale kept with the norm folded in, so code·q times the scale is the
// cosine similarity to a unit query q. A byte a dimension keeps 100,000
// chunks of 256 dimensions in 27 MB rather than 102 MB of float32, and
// moves rank only where cosines differ by less than about 1%.
type vectorSet struct {
	gen, rev int64
	dims     int
	// indexed is when each source's chunks were written (see
	// store.Knowledge.IndexedSources), to read again only what changed.
	indexed map[string]time.Time
	ids     []int64
	sources []int32 // index into names
	names   []string
	codes   []int8 // len(ids) * dims
	scales  []float32
}

// add appends one vector of source src; a zero vector is left out.
func (v *vectorSet) add(id int64, src string, vec []float32, srcIndex map[string]int32) {
	var maxAbs, norm float64
	for _, f := range vec {
		maxAbs = max(maxAbs, math.Abs(float64(f)))
		norm += float64(f) * float64(f)
	}
	if maxAbs == 0 {
		return
	}
	i, ok := srcIndex[src]
	if !ok {
		i = int32(len(v.names))
		srcIndex[src] = i
		v.names = append(v.names, src)
	}
	v.ids = append(v.ids, id)
	v.sources = append(v.sources, i)
	for _, f := range vec {
		v.codes = append(v.codes, int8(math.Round(float64(f)/maxAbs*127)))
	}
	v.scales = append(v.scales, float32(maxAbs/127/math.Sqrt(norm)))
}

// keep copies from old the vectors of the sources keep says are unchanged.
func (v *vectorSet) keep(old *vectorSet, keep func(src string) bool, srcIndex map[string]int32) {
	d := v.dims
	for i, id := range old.ids {
		src := old.names[old.sources[i]]
		if !keep(src) {
			continue
		}
		j, ok := srcIndex[src]
		if !ok {
			j = int32(len(v.names))
			srcIndex[src] = j
			v.names = append(v.names, src)
		}
		v.ids = append(v.ids, id)
		v.sources = append(v.sources, j)
		v.codes = append(v.codes, old.codes[i*d:i*d+d]...)
		v.scales = append(v.scales, old.scales[i])
	}
}

// bytes is the memory the set holds.
func (v *vectorSet) bytes() int {
	return len(v.codes) + 8*len(v.ids) + 4*len(v.sources) + 4*len(v.scales)
}

// scored is a chunk and its similarity to the query.
type scored struct {
	id    int64
	score float32
}

// nearest returns the n chunks most similar to q, best first; allowed,
// when not nil, keeps only chunks of the sources it marks (by index).
// The scan is split across the cores.
func (v *vectorSet) nearest(q []float32, n int, allowed []bool) []scored {
	if len(q) != v.dims || len(v.ids) == 0 || n <= 0 {
		return nil
	}
	var norm float64
	for _, f := range q {
		norm += float64(f) * float64(f)
	}
	if norm == 0 {
		return nil
	}
	unit := make([]float32, len(q))
	for i, f := range q {
		unit[i] = float32(float64(f) / math.Sqrt(norm))
	}
	parts := min(runtime.GOMAXPROCS(0), max(1, len(v.ids)/2048))
	found := make([][]scored, parts)
	var wg sync.WaitGroup
	per := (len(v.ids) + parts - 1) / parts
	for p := range parts {
		lo, hi := p*per, min(len(v.ids), (p+1)*per)
		wg.Go(func() { found[p] = v.scan(unit, lo, hi, n, allowed) })
	}
	wg.Wait()
	all := slices.Concat(found...)
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return all[:min(n, len(all))]
}

// scan keeps the n best of vectors lo to hi in a min-heap.
func (v *vectorSet) scan(q []float32, lo, hi, n int, allowed []bool) []scored {
	h := make(minHeap, 0, n)
	d := v.dims
	for i := lo; i < hi; i++ {
		if allowed != nil && !allowed[v.sources[i]] {
			continue
		}
		code := v.codes[i*d : i*d+d]
		var s0, s1, s2, s3 float32
		j := 0
		for ; j+4 <= d; j += 4 {
			s0 += float32(code[j]) * q[j]
			s1 += float32(code[j+1]) * q[j+1]
			s2 += float32(code[j+2]) * q[j+2]
			s3 += float32(code[j+3]) * q[j+3]
		}
		for ; j < d; j++ {
			s0 += float32(code[j]) * q[j]
		}
		s := (s0 + s1 + s2 + s3) * v.scales[i]
		if len(h) < n {
			heap.Push(&h, scored{v.ids[i], s})
		} else if s > h[0].score {
			h[0] = scored{v.ids[i], s}
			heap.Fix(&h, 0)
		}
	}
	return h
}

type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
