//go:build deps

package main

// Built with the tag deps, the floor links what toolkit links besides its
// own code (bench/deps): it starts, and holds its code in memory, as a
// toolkit without its own packages would.
import _ "toolkit/bench/deps"
