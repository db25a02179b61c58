//go:build race

package patch

// raceBuild: under -race the patch child is instrumented and many times
// slower; the kill test then runs fewer rounds.
const raceBuild = true
