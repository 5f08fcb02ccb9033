// promtool: the `check metrics` command of Prometheus' promtool, for tests.
//
//	promtool check metrics < metrics.txt
//
// Same library, output and exit codes as upstream promtool v3
// (cmd/promtool/main.go CheckMetrics without --extended): client_golang's
// promlint reads the text exposition from stdin; each problem is printed as
// "<metric> <text>" on stderr; exit 0 clean, 3 lint problems, 1 error
// (unparsable input, usage).
package main

import (
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

const (
	successExitCode = 0
	failureExitCode = 1
	lintErrExitCode = 3
)

func main() {
	if len(os.Args) != 3 || os.Args[1] != "check" || os.Args[2] != "metrics" {
		fmt.Fprintln(os.Stderr, "usage: promtool check metrics < metrics.txt")
		os.Exit(failureExitCode)
	}
	os.Exit(checkMetrics())
}

func checkMetrics() int {
	l := promlint.New(os.Stdin)
	problems, err := l.Lint()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error while linting:", err)
		return failureExitCode
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p.Metric, p.Text)
	}
	if len(problems) > 0 {
		return lintErrExitCode
	}
	return successExitCode
}
