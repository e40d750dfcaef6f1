package kernel

import "math/rand/v2"

// NestCandidates is the search's candidate list for a nest, in the order
// it measures them for seed.
func NestCandidates(info NestInfo, reassociate bool, seed uint64) []*NestSchedule {
	return nestCandidates(info, reassociate, rand.New(rand.NewPCG(seed, 0x7475_6e65)))
}
