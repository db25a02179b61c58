//go:build race

package write

// raceBuild: under -race the writer child is instrumented and many times
// slower; the kill test then runs fewer times (the whole 200 run without it).
const raceBuild = true
