package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"
)

// mcpCalls compares n read calls of a small file made through one toolkit mcp
// session with n toolkit read processes, in total, and notes the median of
// each call.
func mcpCalls(e *benchEnv, n int) (row, error) {
	small := e.path("small.txt")
	if err := os.WriteFile(small, []byte("a small file\nof three\nlines\n"), 0o644); err != nil {
		return row{}, err
	}
	var procs []time.Duration
	for range n {
		start := time.Now()
		if err := exec.Command(e.toolkit, "read", small).Run(); err != nil {
			return row{}, err
		}
		procs = append(procs, time.Since(start))
	}

	cmd := exec.Command(e.toolkit, "mcp")
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return row{}, err
	}
	out := bufio.NewReader(outPipe)
	send := func(id int, method string, params any) error {
		msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
		if id > 0 {
			msg["id"] = id
		}
		b, _ := json.Marshal(msg)
		if _, err := in.Write(append(b, '\n')); err != nil {
			return err
		}
		if id == 0 {
			return nil
		}
		line, err := out.ReadBytes('\n')
		if err != nil {
			return err
		}
		var resp struct {
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
			Error any `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil || resp.Error != nil || resp.Result.IsError {
			return fmt.Errorf("response %s: %v", line, err)
		}
		return nil
	}
	if err := send(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}); err != nil {
		return row{}, err
	}
	if err := send(0, "notifications/initialized", map[string]any{}); err != nil {
		return row{}, err
	}
	sessionStart := time.Now()
	var calls []time.Duration
	for i := range n {
		start := time.Now()
		if err := send(i+2, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": small}}); err != nil {
			return row{}, err
		}
		calls = append(calls, time.Since(start))
	}
	session := time.Since(sessionStart)
	in.Close()
	_, _ = io.Copy(io.Discard, out)
	_ = cmd.Wait()

	var total time.Duration
	for _, d := range procs {
		total += d
	}
	e.notes = append(e.notes, fmt.Sprintf("mcp: %d read calls of a small file, median per call: %.2f ms through one toolkit mcp session, %.2f ms as toolkit read processes (%.1f× faster in total; target ≥ 5×)",
		n, ms(medianDur(calls)), ms(medianDur(procs)), total.Seconds()/session.Seconds()))
	c := comparison{group: "mcp", name: fmt.Sprintf("%d sequential read calls: one toolkit mcp session, against %d toolkit read processes", n, n),
		base: []string{"toolkit", "read", "(×1000 processes)"}, target: "≤ 0.2× (≥ 5× faster)", limit: 0.2}
	return row{c: c, base: measure{wall: total}, tool: measure{wall: session}}, nil
}

func medianDur(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// binarySize notes the size of the binary measured.
func binarySize(e *benchEnv) {
	if fi, err := os.Stat(e.toolkit); err == nil {
		e.notes = append(e.notes, fmt.Sprintf("binary: %.2f MiB (%d bytes), as install.sh builds it, the MCP server in it; target ≤ 12 MiB", float64(fi.Size())/(1<<20), fi.Size()))
	}
}

// faultCost notes what the first touch of a page of fresh memory costs on
// this machine, the floor under every figure that reads or allocates
// much: 64 MiB mapped, one byte written in each 4 KiB page, the best of 5.
func faultCost(e *benchEnv) {
	const size, page = 64 << 20, 4 << 10
	best := time.Duration(1 << 62)
	for range 5 {
		m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			return
		}
		start := time.Now()
		for i := 0; i < size; i += page {
			m[i] = 1
		}
		best = min(best, time.Since(start))
		syscall.Munmap(m)
	}
	e.notes = append(e.notes, fmt.Sprintf("page faults: the first touch of a 4 KiB page of fresh memory costs %.1f µs here (64 MiB touched, best of 5); so a process that touches 30 MiB spends about %.0f ms on it",
		float64(best.Microseconds())/(size/page), float64(best.Milliseconds())*30/64))
}
