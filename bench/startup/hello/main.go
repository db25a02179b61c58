// Command hello prints a line: the floor of a static Go program's start,
// which toolkit --version is measured against.
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
