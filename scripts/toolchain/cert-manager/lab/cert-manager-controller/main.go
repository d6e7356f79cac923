// The lab's cert-manager controller: cert-manager's own controllers (pkg/controller) for
// Certificates, CertificateRequests, Issuers and ClusterIssuers, with the CA and SelfSigned issuers
// only. Venafi's issuer needs github.com/Venafi/vcert/v5, which the Go module proxy refuses, and
// ACME and Vault pull every DNS provider's SDK in for issuers a loopback lab cannot use; so the
// controllers are chosen here by import, and upstream's config API (whose controller list imports
// the Venafi controllers) is not used: its options are filled directly with upstream's defaults.
// One replica, so no leader election.
package main

import (
	"context"
	"net"
	"os"
	"sync"
	"time"

	"github.com/cert-manager/cert-manager/khook-lab/lab/labcmd"
	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/healthz"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each package registers its controller (or, under pkg/issuer, its issuer type) in init().
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	f := labcmd.NewFlags("cert-manager-controller")
	clusterResourceNamespace := f.String("cluster-resource-namespace", "kube-system", "where ClusterIssuers' Secrets live")
	metricsAddr := f.String("metrics-listen-address", "0.0.0.0:9402", "Prometheus metrics")
	healthzAddr := f.String("internal-healthz-listen-address", "0.0.0.0:9403", "the liveness probe's /livez")
	// No leader election (one replica) and no ACME (no challenges to schedule, no solver pods).
	f.Ignore("leader-election-namespace", "acme-http01-solver-image", "max-concurrent-challenges")
	ctx := f.Parse(os.Args[1:])
	log := logf.FromContext(ctx, "controller")

	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         f.Kubeconfig,
		KubernetesAPIQPS:   20, // upstream's defaults
		KubernetesAPIBurst: 50,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: *clusterResourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		labcmd.Fail(err, "cannot build the controller context")
	}

	// Constructing a controller asks the shared informer factories for the informers it needs,
	// so the factories start only once every controller is built.
	loops := map[string]controller.Interface{}
	for name, construct := range controller.Known() {
		if loops[name], err = construct(factory); err != nil {
			labcmd.Fail(err, "cannot build a controller", "controller", name)
		}
	}
	shared, err := factory.Build()
	if err != nil {
		labcmd.Fail(err, "cannot build the controller context")
	}
	serve(ctx, *metricsAddr, func(ln net.Listener) error { return shared.Metrics.NewServer(ln).Serve(ln) })
	serve(ctx, *healthzAddr, func(ln net.Listener) error { return healthz.NewServer(20*time.Second).Start(ctx, ln) })

	var running sync.WaitGroup
	for name, loop := range loops {
		log.Info("starting controller", "controller", name)
		running.Go(func() {
			if err := loop.Run(5, ctx); err != nil { // 5 workers: upstream's default
				labcmd.Fail(err, "controller stopped", "controller", name)
			}
		})
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	running.Wait()
}

// serve listens on addr and serves there until the process ends.
func serve(ctx context.Context, addr string, run func(net.Listener) error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		labcmd.Fail(err, "cannot listen", "address", addr)
	}
	go func() {
		if err := run(ln); err != nil && ctx.Err() == nil {
			labcmd.Fail(err, "server stopped", "address", addr)
		}
	}()
}
