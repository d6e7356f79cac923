#!/usr/bin/env bash
# The benchmark's realistic bootstrap as the script a platform team would write: serial
# `helm upgrade --install --wait`, `kubectl apply -f`, `kubectl wait`, in the same order as
# bootstrap.khook.yaml's dependencies. REPO and SUFFIX as there; KUBECONFIG, helm and kubectl
# from the environment.
set -euo pipefail
cd "$(dirname "$0")"
: "${REPO:?set REPO to the chart repository URL}" "${SUFFIX:?set SUFFIX}"
T=5m

kubectl create namespace "platform-$SUFFIX" --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -n "platform-$SUFFIX" -f manifests/platform-config.yaml

helm upgrade --install ingress khook-deploy --repo "$REPO" --version 0.1.0 \
  -n "ingress-$SUFFIX" --create-namespace --set replicas=2 --wait --timeout $T
helm upgrade --install cert-manager khook-test-app --repo "$REPO" --version 0.1.0 \
  -n "cert-$SUFFIX" --create-namespace --wait --timeout $T

sed "s/SUFFIX/$SUFFIX/g" manifests/issuer-crd.yaml | kubectl apply -f -
kubectl wait --for=condition=Established "crd/issuers.$SUFFIX.bench.khook.io" --timeout=$T
sed "s/SUFFIX/$SUFFIX/g" manifests/issuer.yaml | kubectl apply -n "cert-$SUFFIX" -f -

helm upgrade --install secrets khook-demo --repo "$REPO" --version 0.1.0 \
  -n "secrets-$SUFFIX" --create-namespace --set message=bootstrap
helm upgrade --install monitoring khook-test-config --repo "$REPO" --version 0.1.0 \
  -n "monitoring-$SUFFIX" --create-namespace
helm upgrade --install gitops khook-test-app --repo "$REPO" --version 0.1.0 \
  -n "gitops-$SUFFIX" --create-namespace --set message=gitops --wait --timeout $T

kubectl patch deployment ingress -n "ingress-$SUFFIX" --type merge -p '{"metadata":{"labels":{"tuned":"true"}}}'

kubectl rollout restart deployment/gitops-app -n "gitops-$SUFFIX"
kubectl rollout status deployment/gitops-app -n "gitops-$SUFFIX" --timeout=$T

kubectl apply -n "gitops-$SUFFIX" -f manifests/migrate-job.yaml
kubectl wait --for=condition=Complete job/migrate -n "gitops-$SUFFIX" --timeout=$T
