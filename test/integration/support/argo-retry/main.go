// argo-retry answers whether Argo Workflows retries a failed step, with Argo's own expression
// evaluator and function map (util/expr/argoexpr and util/expr/env at the pinned version), for
// docs/fleet.md's test: the local cluster runs no Argo controller.
//
// Usage: argo-retry EXPRESSION EXIT_CODE...
// Prints one JSON object: {"<exit code>": true|false, ...}; an expression Argo cannot evaluate
// exits 1 with Argo's error.
//
// The scope is the one the controller's buildRetryStrategyLocalScope builds for the last retry
// (workflow/controller/operator.go): `retries`, `lastRetry.exitCode` (a string; "-1" when the pod
// left none), `lastRetry.status`, `lastRetry.duration` and `lastRetry.message`, expanded by
// env.GetFuncMap as the controller does.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/argoproj/argo-workflows/v3/util/expr/argoexpr"
	"github.com/argoproj/argo-workflows/v3/util/expr/env"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: argo-retry EXPRESSION EXIT_CODE...")
		os.Exit(2)
	}
	expression := os.Args[1]
	answers := map[string]bool{}
	for _, exitCode := range os.Args[2:] {
		scope := env.GetFuncMap(map[string]interface{}{
			"retries":            "0",
			"lastRetry.exitCode": exitCode,
			"lastRetry.status":   "Failed",
			"lastRetry.duration": "12.5",
			"lastRetry.message":  fmt.Sprintf("Error (exit code %s)", exitCode),
		})
		retry, err := argoexpr.EvalBool(expression, scope)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		answers[exitCode] = retry
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
