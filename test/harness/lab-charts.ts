/**
 * The real charts (and large real CRDs) the lab serves from its mirror, as the toolchain fetches
 * them: from the Go modules that carry them, pinned like every other tool, packaged with the
 * toolchain's helm into the tool cache (never into the repository). charts-mirror.ts serves them
 * from a helm repository over HTTP and from the toolchain's OCI registry.
 */

export interface LabChart {
  name: string;
  /** The Go module and version that carry the chart's sources. */
  module: string;
  moduleVersion: string;
  /** The chart's directory inside the module. */
  path: string;
  /** Set as the chart's version and appVersion where upstream's release tool stamps them (a `v0.0.0` placeholder). */
  stamp?: string;
  /** The public repository a spec names by default (the mirror stands in for it). */
  publicRepo: string;
}

export const LAB_CHARTS: readonly LabChart[] = [
  {
    name: "cert-manager",
    module: "github.com/cert-manager/cert-manager",
    moduleVersion: "v1.21.2",
    path: "deploy/charts/cert-manager",
    stamp: "v1.21.2",
    publicRepo: "https://charts.jetstack.io",
  },
  {
    name: "metrics-server",
    module: "sigs.k8s.io/metrics-server",
    moduleVersion: "v0.9.0",
    path: "charts/metrics-server",
    publicRepo: "https://kubernetes-sigs.github.io/metrics-server/",
  },
  {
    // The proxy serves k8s.io/ingress-nginx only at pseudo-versions; this one carries chart 4.11.0.
    name: "ingress-nginx",
    module: "k8s.io/ingress-nginx",
    moduleVersion: "v0.0.0-20240708192948-52c50467d67d",
    path: "charts/ingress-nginx",
    publicRepo: "https://kubernetes.github.io/ingress-nginx",
  },
  {
    name: "cilium",
    module: "github.com/cilium/cilium",
    moduleVersion: "v1.20.2",
    path: "install/kubernetes/cilium",
    publicRepo: "https://helm.cilium.io/",
  },
];

/** Plain manifests the lab keeps beside the charts: prometheus-operator's CRDs, six of ten over 256 KiB. */
export interface LabManifests {
  name: string;
  module: string;
  moduleVersion: string;
  path: string;
}

export const LAB_MANIFESTS: readonly LabManifests[] = [
  {
    name: "prometheus-operator-crds",
    module: "github.com/prometheus-operator/prometheus-operator",
    moduleVersion: "v0.85.0",
    path: "example/prometheus-operator-crd",
  },
];
