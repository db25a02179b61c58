//go:build !race

package patch

const raceBuild = false
