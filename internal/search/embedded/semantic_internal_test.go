package embedded

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sourcebase/sourcebase/internal/search"
)

func TestSimilarBestSelectsTheFirstNAsSearchNearestSortsThem(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 2, 7, 100, 1000} {
		sims := make([]search.Similarity, size)
		for i := range sims {
			// Few distinct scores: ties, decided by the larger id.
			sims[i] = search.Similarity{ID: fmt.Sprintf("id%04d", rng.IntN(10000)), Score: float32(rng.IntN(20)) / 20}
		}
		for _, n := range []int{-1, 0, 1, 3, 10, size / 3, size/2 - 1, size, size + 5} {
			want := search.Nearest(slices.Clone(sims), n)
			if got := best(slices.Clone(sims), n); !slices.Equal(got, want) {
				t.Errorf("size %d, n %d: %v, want %v", size, n, got, want)
			}
		}
	}
}
