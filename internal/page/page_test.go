package page

import (
	"slices"
	"testing"
)

func TestOf(t *testing.T) {
	items := []int{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		offset, limit int
		want          []int
	}{
		{1, 2, []int{1, 2}}, {4, 2, []int{4, 5}}, {4, 10, []int{4, 5}}, {5, 1, []int{5}}, {6, 1, nil}, {1 << 30, 1 << 30, nil},
	} {
		if got := Of(items, tc.offset, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("Of(offset %d, limit %d) = %v, want %v", tc.offset, tc.limit, got, tc.want)
		}
	}
}

func TestNote(t *testing.T) {
	for _, tc := range []struct {
		offset, shown int
		total         int64
		note          string
		next          int64
	}{
		{1, 5, 5, "", 0},
		{1, 2, 5, "; shown 1-2; next: offset 3", 3},
		{4, 2, 5, "; shown 4-5", 0},
		{6, 0, 5, "; offset 6 is past the last (5)", 0},
		{1, 0, 0, "", 0},
	} {
		note, next := Note(tc.offset, tc.shown, tc.total)
		if note != tc.note || next != tc.next {
			t.Errorf("Note(%d, %d, %d) = %q, %d; want %q, %d", tc.offset, tc.shown, tc.total, note, next, tc.note, tc.next)
		}
	}
}
