//go:build !race

package jobs

const raceBuild = false
