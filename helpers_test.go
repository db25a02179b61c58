package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
)

// The helper programs scripts run, beside toolkit: small stand-ins for what
// an image may lack (a server, a client).

// testServer is "test-server PORTFILE": a TCP server on loopback that says
// "listening on PORT", writes its port to PORTFILE, and answers each
// connection with what it read, upper-cased, until it is stopped.
func testServer() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: test-server PORTFILE")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(os.Args[1], []byte(fmt.Sprint(port)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening on %d\n", port)
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer c.Close()
			b := make([]byte, 4096)
			n, _ := c.Read(b)
			fmt.Printf("served %q\n", b[:n])
			_, _ = io.WriteString(c, strings.ToUpper(string(b[:n])))
		}()
	}
}

// testClient is "test-client PORTFILE TEXT": it sends TEXT to the server
// whose port PORTFILE holds, and prints the answer.
func testClient() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: test-client PORTFILE TEXT")
		os.Exit(2)
	}
	port, err := os.ReadFile(os.Args[1])
	if err == nil {
		var c net.Conn
		if c, err = net.Dial("tcp", "127.0.0.1:"+strings.TrimSpace(string(port))); err == nil {
			defer c.Close()
			_, _ = io.WriteString(c, os.Args[2])
			_, err = io.Copy(os.Stdout, c)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
