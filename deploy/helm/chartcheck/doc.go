// Package chartcheck lints and renders the Helm chart in deploy/helm/parley
// with Helm's own Go module, as `helm lint --strict` and `helm install
// --dry-run` do, and checks every rendered object against the Kubernetes
// API's Go types: each is decoded strictly into its k8s.io/api type (an
// unknown or mistyped field is an error), then checked for what the API
// server would refuse or what would leave the release broken (a selector
// that matches no pod, a probe on a port no container has, an HPA aimed
// at nothing).
//
// It needs no cluster and no network: `make chart-check` runs its tests.
// It is a module of its own so the main module does not depend on Helm
// and Kubernetes.
package chartcheck
