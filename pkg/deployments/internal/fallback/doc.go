// Package fallback tests the deployments manager on a cluster without the
// optional CRDs (Traefik IngressRoute, ExternalSecret, ServiceMonitor): it
// removes them from its own control plane before starting the manager.
package fallback
