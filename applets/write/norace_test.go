//go:build !race

package write

const raceBuild = false
