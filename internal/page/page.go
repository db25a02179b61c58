// Package page cuts a list into the page a call asked for and says so in
// the line that sums it up, as grep and glob show their lists:
//
//	[312 matches in 41 files; shown 1-200; next: offset 201]
package page

import "fmt"

// Of is the page of items that starts at offset (from 1) and holds at most
// limit of them.
func Of[T any](items []T, offset, limit int) []T {
	if offset-1 >= len(items) {
		return nil
	}
	items = items[offset-1:]
	return items[:min(len(items), limit)]
}

// Note is what the summing-up line says of a page of shown items from
// offset, of total: "; shown 3-4" when it is not the whole list, and
// "; next: offset 5" when more follow (next is then that offset, else 0),
// or "; offset 9 is past the last (8)" when it shows none of a list that
// has some.
func Note(offset, shown int, total int64) (note string, next int64) {
	if shown > 0 && (offset > 1 || int64(shown) < total) {
		note = fmt.Sprintf("; shown %d-%d", offset, offset+shown-1)
	}
	switch n := int64(offset) + int64(shown); {
	case shown > 0 && n <= total:
		return note + fmt.Sprintf("; next: offset %d", n), n
	case shown == 0 && total > 0:
		return fmt.Sprintf("; offset %d is past the last (%d)", offset, total), 0
	}
	return note, 0
}
