//go:build race

package jobs

// raceBuild: under -race, sync.Pool drops what it is given at random, so
// regexp allocates a machine for every match: allocations then say nothing
// of what a look holds.
const raceBuild = true
