package walk

import (
	"fmt"

	"github.com/bmatcuk/doublestar/v4"
)

// MaxAlternatives bounds the paths a glob's brace groups spell out: doublestar
// tries each of them in turn, so that 30 groups of two take 2^30 tries on
// one name.
const MaxAlternatives = 1024

// CheckGlob refuses a pattern that is not a glob, or whose brace groups
// spell out more than MaxAlternatives paths; what is wrong is said in a
// clause ("is not a glob").
func CheckGlob(pattern string) error {
	if !doublestar.ValidatePattern(pattern) {
		return fmt.Errorf("is not a glob")
	}
	if n := alternatives(pattern); n > MaxAlternatives {
		return fmt.Errorf("has brace groups that spell out more than %d paths; use fewer groups, or * in their place", MaxAlternatives)
	}
	return nil
}

// alternatives is how many paths the brace groups of a valid pattern spell
// out, at most: the product, over every group, of its count of
// alternatives, saturated just past MaxAlternatives.
func alternatives(pattern string) int {
	total := 1
	var commas []int // per open group, its commas so far
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '{':
			commas = append(commas, 0)
		case ',':
			if len(commas) > 0 {
				commas[len(commas)-1]++
			}
		case '}':
			if len(commas) > 0 {
				total = min(total*(commas[len(commas)-1]+1), MaxAlternatives+1)
				commas = commas[:len(commas)-1]
			}
		}
	}
	return total
}
