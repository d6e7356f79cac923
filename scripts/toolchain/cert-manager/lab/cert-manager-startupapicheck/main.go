// The lab's cert-manager startupapicheck, the chart's post-install hook Job: `check api` repeats
// cert-manager's own API check (pkg/util/cmapichecker: dry-run creates of a valid and an invalid
// CertificateRequest, which pass only once the CRDs exist and the webhook admits and denies) until
// it passes or --wait runs out. Exit 0 and "The cert-manager API is ready" as upstream, else 1.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/cert-manager/cert-manager/khook-lab/lab/labcmd"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/util/cmapichecker"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) < 3 || os.Args[1] != "check" || os.Args[2] != "api" {
		fmt.Fprintln(os.Stderr, "usage: cert-manager-startupapicheck check api [--wait=DURATION] [--interval=DURATION] [-v]")
		os.Exit(2)
	}
	f := labcmd.NewFlags("cert-manager-startupapicheck check api")
	waitFor := f.Duration("wait", 0, "keep checking this long (0: check once)")
	interval := f.Duration("interval", 5*time.Second, "time between checks")
	ctx := f.Parse(os.Args[3:])
	log := logf.FromContext(ctx, "checkAPI")

	// The namespace the dry-run CertificateRequests go to: the kubeconfig's (the pod's own).
	namespace, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.Kubeconfig}, nil).Namespace()
	if err != nil {
		labcmd.Fail(err, "cannot read the namespace from the kubeconfig")
	}
	checker, err := cmapichecker.New(f.RESTConfig(), namespace)
	if err != nil {
		labcmd.Fail(err, "cannot build the API checker")
	}

	deadline := time.Now().Add(*waitFor)
	for {
		err := checker.Check(ctx)
		if err == nil {
			fmt.Println("The cert-manager API is ready")
			return
		}
		// The simple error names the cause as a user would (CRDs missing, webhook not ready, ...).
		if simple := cmapichecker.TranslateToSimpleError(err); simple != nil {
			err = fmt.Errorf("%w (%v)", simple, err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			labcmd.Fail(err, "the cert-manager API is not ready", "waited", *waitFor)
		}
		log.V(2).Info("Not ready", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(*interval):
		}
	}
}
