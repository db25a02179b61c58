//go:build race

package main

// raceBuild: under -race every toolkit a test starts is instrumented and
// many times slower; the stress tests then run fewer times.
const raceBuild = true
