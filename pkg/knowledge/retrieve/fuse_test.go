package retrieve

import (
	"math"
	"testing"
)

func TestFuseRanksByReciprocalRank(t *testing.T) {
	tests := []struct {
		name             string
		keyword, vector  []int64
		want             []int64
		wantKeyword      []int
		wantVector       []int
		wantFirstScoreIs float64
	}{
		{name: "a chunk second in both beats one first in only one",
			keyword: []int64{1, 2}, vector: []int64{3, 2},
			want: []int64{2, 1, 3}, wantKeyword: []int{2, 1, 0}, wantVector: []int{2, 0, 1},
			wantFirstScoreIs: (2.0 / 62) / (2.0 / 61)},
		{name: "the first of both scores 1",
			keyword: []int64{7}, vector: []int64{7},
			want: []int64{7}, wantKeyword: []int{1}, wantVector: []int{1}, wantFirstScoreIs: 1},
		{name: "equal scores go to the better keyword rank",
			keyword: []int64{5}, vector: []int64{4},
			want: []int64{5, 4}, wantKeyword: []int{1, 0}, wantVector: []int{0, 1}, wantFirstScoreIs: 0.5},
		{name: "one search alone keeps its order",
			vector: []int64{9, 8, 7},
			want:   []int64{9, 8, 7}, wantKeyword: []int{0, 0, 0}, wantVector: []int{1, 2, 3}, wantFirstScoreIs: 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fuse(tt.keyword, tt.vector)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v", got)
			}
			for i, f := range got {
				if f.id != tt.want[i] || f.keyword != tt.wantKeyword[i] || f.vector != tt.wantVector[i] {
					t.Fatalf("result %d is %+v; all %+v", i, f, got)
				}
			}
			if math.Abs(got[0].score-tt.wantFirstScoreIs) > 1e-9 {
				t.Fatalf("first score %v, want %v", got[0].score, tt.wantFirstScoreIs)
			}
		})
	}
}

func TestQuantisedVectorsRankByCosine(t *testing.T) {
	set := &vectorSet{dims: 3}
	idx := map[string]int32{}
	set.add(1, "a", []float32{1, 0, 0}, idx)
	set.add(2, "a", []float32{0.7, 0.7, 0}, idx)
	set.add(3, "b", []float32{0, 0, 5}, idx)
	set.add(4, "b", []float32{0, 0, 0}, idx) // no direction: left out
	got := set.nearest([]float32{2, 0.2, 0}, 10, nil)
	if len(got) != 3 || got[0].id != 1 || got[1].id != 2 || got[2].id != 3 {
		t.Fatalf("got %+v", got)
	}
	if math.Abs(float64(got[0].score)-0.995) > 0.01 || math.Abs(float64(got[2].score)) > 0.01 {
		t.Fatalf("scores %+v, want cosines", got)
	}
	t.Run("allowed sources only", func(t *testing.T) {
		got := set.nearest([]float32{1, 0, 0}, 10, []bool{false, true})
		if len(got) != 1 || got[0].id != 3 {
			t.Fatalf("got %+v", got)
		}
	})
}
