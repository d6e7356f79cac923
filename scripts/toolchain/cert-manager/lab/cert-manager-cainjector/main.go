// The lab's cert-manager cainjector: cert-manager's own injectors (pkg/controller/cainjector) in a
// controller-runtime manager. They copy a CA into the caBundle of webhook configurations,
// APIServices and CRDs annotated cert-manager.io/inject-ca-from(-secret): here, the webhook's CA
// into cert-manager's own webhook configurations, which ends the x509 part of the field's race.
// Every injectable kind and the Certificate data source are on, as upstream's defaults have them.
// One replica, so no leader election.
package main

import (
	"context"
	"os"
	"time"

	"github.com/cert-manager/cert-manager/khook-lab/lab/labcmd"
	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	f := labcmd.NewFlags("cert-manager-cainjector")
	metricsAddr := f.String("metrics-listen-address", "0.0.0.0:9402", "Prometheus metrics")
	f.Ignore("leader-election-namespace")
	ctx := f.Parse(os.Args[1:])

	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(f.RESTConfig(), ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: *metricsAddr},
		// The injectors watch Secrets' metadata only and read a source Secret when they need it,
		// so the manager's client must not cache every Secret of the cluster whole.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		labcmd.Fail(err, "cannot create the manager")
	}

	// The Certificate data source watches Certificates: wait for their CRD, which the chart
	// applies in the same release as this pod.
	crd := types.NamespacedName{Name: "certificates.cert-manager.io"}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		return mgr.GetAPIReader().Get(ctx, crd, &apiext.CustomResourceDefinition{}) == nil, nil
	}); err != nil {
		labcmd.Fail(err, "the Certificate CRD did not appear", "crd", crd.Name)
	}

	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     true,
			cainjector.CustomResourceDefinitionName:       true,
		},
	}); err != nil {
		labcmd.Fail(err, "cannot register the injectors")
	}
	if err := mgr.Start(ctx); err != nil {
		labcmd.Fail(err, "manager stopped")
	}
}
