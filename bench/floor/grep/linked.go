//go:build linked

package main

// Built with the tag linked, the floor links all of toolkit's own code too.
import _ "toolkit/bench/linked"
