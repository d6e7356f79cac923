// The lab's cert-manager webhook: cert-manager's own admission server (internal/webhook: the
// validation, mutation and conversion of cert-manager's resources), serving with a certificate it
// issues itself from a CA it keeps in a Secret (pkg/server/tls dynamic serving), which cainjector
// then copies into the webhook configurations' caBundle. That is the field's race the lab exists
// to show: refused until this process listens, x509 until the caBundle is injected, then admitted.
// Upstream's config-file and flag machinery is replaced by the few flags the chart passes.
package main

import (
	"os"
	"time"

	"github.com/cert-manager/cert-manager/internal/apis/config/shared"
	config "github.com/cert-manager/cert-manager/internal/apis/config/webhook"
	"github.com/cert-manager/cert-manager/internal/webhook"
	"github.com/cert-manager/cert-manager/khook-lab/lab/labcmd"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

func main() {
	f := labcmd.NewFlags("cert-manager-webhook")
	securePort := f.Int("secure-port", 6443, "the admission server's port (every interface)")
	healthzPort := f.Int("healthz-port", 6080, "/healthz (readiness) and /livez (every interface)")
	metricsAddr := f.String("metrics-listen-address", "0.0.0.0:9402", "Prometheus metrics")
	caNamespace := f.String("dynamic-serving-ca-secret-namespace", "", "the namespace of the serving CA's Secret")
	caName := f.String("dynamic-serving-ca-secret-name", "", "the serving CA's Secret")
	var dnsNames labcmd.List
	f.Var(&dnsNames, "dynamic-serving-dns-names", "the serving certificate's DNS names (repeatable)")
	ctx := f.Parse(os.Args[1:])
	log := logf.FromContext(ctx, "webhook")

	server, err := webhook.NewCertManagerWebhookServer(log, config.WebhookConfiguration{
		KubeConfig:           f.Kubeconfig,
		SecurePort:           int32(*securePort),
		HealthzPort:          int32(*healthzPort),
		MetricsListenAddress: *metricsAddr,
		TLSConfig: shared.TLSConfig{Dynamic: shared.DynamicServingConfig{
			SecretNamespace: *caNamespace,
			SecretName:      *caName,
			DNSNames:        dnsNames,
			LeafDuration:    7 * 24 * time.Hour, // upstream's default
		}},
	})
	if err != nil {
		labcmd.Fail(err, "cannot build the webhook server")
	}
	if err := server.Run(ctx); err != nil {
		labcmd.Fail(err, "webhook server stopped")
	}
}
