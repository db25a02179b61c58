package input

import "strings"

// Suggest returns the name among names that name is most likely a slip for,
// or "" when none is close: a different case or spelling ("Command",
// "timeoutSecs"), one that starts the other ("timeout" for "timeout_secs"),
// an abbreviation ("cmd"), or one within a small edit distance ("comand").
func Suggest(name string, names []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "") }
	n := norm(name)
	for _, cand := range names {
		c := norm(cand)
		if c == n || (len(n) >= 3 && (strings.HasPrefix(c, n) || strings.HasPrefix(n, c) || abbreviates(n, c))) {
			return cand
		}
	}
	best, bestDist := "", -1
	for _, cand := range names {
		c := norm(cand)
		d := distance(n, c)
		limit := max(1, min(len(n), len(c))/3)
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = cand, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes. Field names
// are short; inputs are bounded by the caller (a key longer than 64 bytes is
// not a slip for any field).
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return len(a) + len(b)
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// abbreviates reports whether a is b with letters left out, starting alike.
func abbreviates(a, b string) bool {
	if a == "" || b == "" || a[0] != b[0] {
		return false
	}
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}
