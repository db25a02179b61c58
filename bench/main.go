// Command bench measures toolkit against the baselines its targets name, in
// one run on one machine, and prints each figure as a ratio:
//
//	go run ./bench -toolkit /path/to/toolkit [-only shell] [-runs 5] [-md docs/benchmarks.md]
//
// Each case runs its baseline and toolkit alternately, so that a machine
// that gets busier or quieter during the run affects both alike, and reports
// the median wall time of each and their ratio, and toolkit's peak memory
// (the largest resident set of the process tree it waited for).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

type measure struct {
	wall time.Duration
	rss  int64 // KiB
}

// run runs argv with stdin from in (a file path, or "") and stdout to
// /dev/null, through the runner, and returns its wall time and peak memory.
func run(argv []string, in string, env []string) (measure, error) {
	// The runner's environment is the bench's when it started: the
	// command takes the bench's as it is now.
	return theRunner.run(request{Argv: argv, In: in, Env: append(os.Environ(), env...)})
}

// The runner is a second process of the bench's own binary, started before
// the bench holds any memory, that starts every measured command. The peak
// resident set wait4 gives for a command counts the process that started
// it: Go starts a command by vfork, and at exec the kernel keeps the larger
// of the two peaks. Started from the bench, which holds test files of
// 100 MiB, every command's peak would be at least the bench's own.
type runner struct {
	enc *json.Encoder
	dec *json.Decoder
}

type request struct {
	Argv []string
	In   string
	Env  []string // the whole environment
}

type reply struct {
	Wall time.Duration
	RSS  int64 // KiB
	Err  string
}

var theRunner *runner

// startRunner starts the runner: this binary again, with -runner.
func startRunner() (*runner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-runner")
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &runner{enc: json.NewEncoder(w), dec: json.NewDecoder(r)}, nil
}

func (r *runner) run(q request) (measure, error) {
	if err := r.enc.Encode(q); err != nil {
		return measure{}, err
	}
	var a reply
	if err := r.dec.Decode(&a); err != nil {
		return measure{}, err
	}
	if a.Err != "" {
		return measure{}, errors.New(a.Err)
	}
	return measure{wall: a.Wall, rss: a.RSS}, nil
}

// serveRunner is the runner's side: each request in, its command run, each
// reply out.
func serveRunner() {
	dec, enc := json.NewDecoder(os.Stdin), json.NewEncoder(os.Stdout)
	for {
		var q request
		if err := dec.Decode(&q); err != nil {
			return
		}
		m, err := runHere(q)
		a := reply{Wall: m.wall, RSS: m.rss}
		if err != nil {
			a.Err = err.Error()
		}
		if err := enc.Encode(a); err != nil {
			return
		}
	}
}

func runHere(q request) (measure, error) {
	cmd := exec.Command(q.Argv[0], q.Argv[1:]...)
	cmd.Env = q.Env
	if q.In != "" {
		f, err := os.Open(q.In)
		if err != nil {
			return measure{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return measure{}, fmt.Errorf("%v: %v: %s", q.Argv, err, stderr.String())
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return measure{wall: wall, rss: ru.Maxrss}, nil
}

func median(ms []measure) measure {
	w := make([]time.Duration, len(ms))
	r := make([]int64, len(ms))
	for i, m := range ms {
		w[i], r[i] = m.wall, m.rss
	}
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	sort.Slice(r, func(i, j int) bool { return r[i] < r[j] })
	return measure{wall: w[len(w)/2], rss: r[len(r)-1]}
}

// A comparison runs toolkit and its baseline.
type comparison struct {
	group, name string
	base        []string
	tool        []string
	stdin       string
	env         []string // for toolkit's side (GOMAXPROCS=16)
	runs        int
	target      string  // what the target says, for the report
	limit       float64 // the largest ratio the target allows (0: none)
	maxMS       float64 // the longest toolkit's median may take, in ms (0: none)
	maxMiB      float64 // the most toolkit's peak may be, in MiB (0: none)
	// peaks says the baseline's peak too, and toolkit's over it, as a row
	// with a peakLimit does: the largest that ratio may be (0: none).
	peaks     bool
	peakLimit float64
	setup     func() error
	needs     string       // a program the baseline is, left out with a note where it is not installed
	before    func() error // before each run of either side, so both start alike
	cleanup   func()
}

type row struct {
	c          comparison
	base, tool measure
}

func (r row) ratio() float64 { return r.tool.wall.Seconds() / r.base.wall.Seconds() }

// peakRatio is toolkit's peak over the baseline's.
func (r row) peakRatio() float64 { return float64(r.tool.rss) / float64(r.base.rss) }

// target is what the target says, with both peaks where the row says them.
func (r row) target() string {
	if !r.c.peaks && r.c.peakLimit == 0 {
		return r.c.target
	}
	return fmt.Sprintf("%s (peaks: toolkit %s, baseline %s, %.2f×)", r.c.target, peak(r.tool.rss), peak(r.base.rss), r.peakRatio())
}

func (c comparison) measure() (row, error) {
	if c.setup != nil {
		if err := c.setup(); err != nil {
			return row{}, err
		}
	}
	var base, tool []measure
	before := func() error {
		if c.before == nil {
			return nil
		}
		return c.before()
	}
	for i := 0; i < c.runs; i++ {
		if err := before(); err != nil {
			return row{}, err
		}
		b, err := run(c.base, c.stdin, nil)
		if err != nil {
			return row{}, err
		}
		if err := before(); err != nil {
			return row{}, err
		}
		t, err := run(c.tool, c.stdin, c.env)
		if err != nil {
			return row{}, err
		}
		if c.cleanup != nil {
			c.cleanup()
		}
		base, tool = append(base, b), append(tool, t)
	}
	return row{c: c, base: median(base), tool: median(tool)}, nil
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-runner" {
		serveRunner()
		return
	}
	toolkit := flag.String("toolkit", "", "the toolkit binary to measure (built by bench/run)")
	only := flag.String("only", "", "run only the cases of these groups, comma-separated (grep,glob,job,edit,patch,write,read,shell,mcp,diagnostics)")
	runs := flag.Int("runs", 5, "runs of each side of each case (startup cases run 4× as many)")
	md := flag.String("md", "", "also write the results as Markdown to this file")
	work := flag.String("work", "", "directory for the test files (default: a new one in $TMPDIR)")
	gobench := flag.String("gobench", "", "go test -bench output to put in the Markdown too")
	flag.Parse()
	if *toolkit == "" {
		fmt.Fprintln(os.Stderr, "bench: -toolkit is required")
		os.Exit(2)
	}
	dir := *work
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	} else {
		d, err := os.MkdirTemp("", "toolkit-bench-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	r, err := startRunner()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: the runner:", err)
		os.Exit(1)
	}
	theRunner = r
	env := &benchEnv{toolkit: *toolkit, dir: dir, runs: *runs}
	var rows []row
	for _, c := range append(cases(env), moreCases(env)...) {
		if *only != "" && !slices.Contains(strings.Split(*only, ","), c.group) {
			continue
		}
		if c.needs != "" {
			if _, err := exec.LookPath(c.needs); err != nil {
				env.notes = append(env.notes, fmt.Sprintf("%s: not measured: %s is not installed (apt-get install ripgrep fd-find)", c.name, c.needs))
				continue
			}
		}
		r, err := c.measure()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", c.name, err)
			os.Exit(1)
		}
		printRow(os.Stdout, r)
		rows = append(rows, r)
	}
	if *only == "" || slices.Contains(strings.Split(*only, ","), "mcp") {
		r, err := mcpCalls(env, 1000)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: mcp:", err)
			os.Exit(1)
		}
		printRow(os.Stdout, r)
		rows = append(rows, r)
		binarySize(env)
		faultCost(env)
	}
	if *only == "" || slices.Contains(strings.Split(*only, ","), "diagnostics") {
		switch r, err := diagEdit(env); {
		case errors.Is(err, errSkipped):
		case err != nil:
			fmt.Fprintln(os.Stderr, "bench: diagnostics:", err)
			os.Exit(1)
		default:
			printRow(os.Stdout, r)
			rows = append(rows, r)
		}
	}
	for _, n := range env.notes {
		fmt.Println(n)
	}
	if *md != "" {
		var gb []string
		if *gobench != "" {
			b, err := os.ReadFile(*gobench)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "Benchmark") {
					gb = append(gb, l)
				}
			}
		}
		if err := writeMarkdown(*md, dir, *toolkit, rows, env.notes, gb); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	}
}

// met says whether the row meets its target; ok false when it has none.
func (r row) met() (met, ok bool) {
	met = (r.c.limit == 0 || r.ratio() <= r.c.limit) && (r.c.maxMS == 0 || ms(r.tool.wall) <= r.c.maxMS) &&
		(r.c.maxMiB == 0 || mib(r.tool.rss) <= r.c.maxMiB) && (r.c.peakLimit == 0 || r.peakRatio() <= r.c.peakLimit)
	return met, r.c.limit > 0 || r.c.maxMS > 0 || r.c.maxMiB > 0 || r.c.peakLimit > 0
}

func printRow(w io.Writer, r row) {
	verdict := ""
	if met, ok := r.met(); ok {
		verdict = map[bool]string{true: "meets the target", false: "MISSES the target"}[met]
	}
	fmt.Fprintf(w, "%-7s %-58s base %8.1f ms  toolkit %8.1f ms  ratio %5.2f  peak %10s  %s %s\n",
		r.c.group, r.c.name, ms(r.base.wall), ms(r.tool.wall), r.ratio(), peak(r.tool.rss), r.target(), verdict)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mib(kib int64) float64 { return float64(kib) / 1024 }

// peak words a peak resident set in KiB; none is measured as 0.
func peak(kib int64) string {
	if kib == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", mib(kib))
}

func writeMarkdown(path, dir, toolkit string, rows []row, notes, gobench []string) error {
	// Commands as a reader can run them: the binary as toolkit, the work
	// directory as $WORK, and pipes escaped for the table.
	cell := func(s string) string {
		s = strings.ReplaceAll(strings.ReplaceAll(s, toolkit, "toolkit"), dir, "$WORK")
		return strings.ReplaceAll(s, "|", "\\|")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	host, _ := os.Hostname()
	fmt.Fprintf(w, "# toolkit's numbers\n\n")
	fmt.Fprintf(w, "Written by `bench/run` on %s, on %s (%s, %d CPUs, %s; %s).\n",
		time.Now().UTC().Format("2006-01-02"), host, cpuModel(), runtime.NumCPU(), memTotal(), runtime.Version())
	fmt.Fprintf(w, "Each case ran its baseline and toolkit alternately; the times are medians, the memory is toolkit's peak resident set.\n")
	fmt.Fprintf(w, "Ratios are toolkit's wall time over the baseline's: below 1, toolkit is faster.\n\n")
	group := ""
	for _, r := range rows {
		if r.c.group != group {
			group = r.c.group
			fmt.Fprintf(w, "\n## %s\n\n| case | baseline | baseline ms | toolkit ms | ratio | toolkit peak | target |\n|---|---|---:|---:|---:|---:|---|\n", group)
		}
		verdict := ""
		if met, ok := r.met(); ok {
			verdict = map[bool]string{true: " (met)", false: " (**missed**)"}[met]
		}
		fmt.Fprintf(w, "| %s | `%s` | %.1f | %.1f | %.2f | %s | %s%s |\n",
			r.c.name, cell(strings.Join(r.c.base, " ")), ms(r.base.wall), ms(r.tool.wall), r.ratio(), peak(r.tool.rss), r.target(), verdict)
	}
	if len(gobench) > 0 {
		fmt.Fprintf(w, "\n## Go benchmarks (testing.B)\n\nThe cleaner's target: ≥ 1 GB/s on text with no escapes (`BenchmarkClean/plain`).\n\n```\n%s\n```\n", strings.Join(gobench, "\n"))
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n## Other figures\n\n")
		for _, n := range notes {
			fmt.Fprintf(w, "- %s\n", strings.ReplaceAll(n, dir, "$WORK"))
		}
	}
	return w.Flush()
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if _, v, ok := strings.Cut(l, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return fmt.Sprintf("%.0f GiB RAM", float64(kb)/(1<<20))
		}
	}
	return "? RAM"
}
