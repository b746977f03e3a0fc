package render

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	"opsnorth.io/scheduler/pkg/labelkeys"
)

// PrivateIPv4 and PrivateIPv6 are the ranges an app may not reach: RFC 1918,
// carrier-grade NAT, link-local (cloud metadata), loopback, and IPv6 unique
// local and link-local. Pod and service IPs of other tenants live in them.
var (
	PrivateIPv4 = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8"}
	PrivateIPv6 = []string{"fc00::/7", "fe80::/10", "::1/128"}
)

const namespaceNameLabel = "kubernetes.io/metadata.name"

// NetworkPolicy isolates an app's pods:
//
//   - ingress only from pods of the same UserDeployment and from pods in the
//     ingress controller's namespace;
//   - egress only to pods of the same UserDeployment, to DNS (kube-dns in
//     kube-system, port 53 UDP and TCP) and to public addresses (0.0.0.0/0
//     and ::/0 without PrivateIPv4/PrivateIPv6), so never to other tenants'
//     namespaces, the cluster's service network or cloud metadata.
func NetworkPolicy(a *App, o Options) Child {
	own := metav1ac.LabelSelector().WithMatchLabels(map[string]string{labelkeys.UserDeployment: KeyLabel(Key(a.UD))})
	peerOwn := networkingv1ac.NetworkPolicyPeer().WithPodSelector(own)
	from := []*networkingv1ac.NetworkPolicyPeerApplyConfiguration{peerOwn}
	if o.IngressControllerNamespace != "" {
		from = append(from, networkingv1ac.NetworkPolicyPeer().WithNamespaceSelector(
			metav1ac.LabelSelector().WithMatchLabels(map[string]string{namespaceNameLabel: o.IngressControllerNamespace})))
	}
	dns := networkingv1ac.NetworkPolicyEgressRule().
		WithTo(networkingv1ac.NetworkPolicyPeer().
			WithNamespaceSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{namespaceNameLabel: "kube-system"})).
			WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"k8s-app": "kube-dns"}))).
		WithPorts(
			networkingv1ac.NetworkPolicyPort().WithProtocol(corev1.ProtocolUDP).WithPort(intstr.FromInt32(53)),
			networkingv1ac.NetworkPolicyPort().WithProtocol(corev1.ProtocolTCP).WithPort(intstr.FromInt32(53)))
	internet := networkingv1ac.NetworkPolicyEgressRule().WithTo(
		networkingv1ac.NetworkPolicyPeer().WithIPBlock(networkingv1ac.IPBlock().WithCIDR("0.0.0.0/0").WithExcept(PrivateIPv4...)),
		networkingv1ac.NetworkPolicyPeer().WithIPBlock(networkingv1ac.IPBlock().WithCIDR("::/0").WithExcept(PrivateIPv6...)))
	name := Name(a.UD.Name, "isolation")
	spec := networkingv1ac.NetworkPolicySpec().
		WithPodSelector(own).
		WithPolicyTypes(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress).
		WithIngress(networkingv1ac.NetworkPolicyIngressRule().WithFrom(from...)).
		WithEgress(networkingv1ac.NetworkPolicyEgressRule().WithTo(peerOwn), dns, internet)
	return Child{GVK: GVKNetworkPolicy, Namespace: a.Namespace, Name: name,
		Object: networkingv1ac.NetworkPolicy(name, a.Namespace).WithLabels(AppLabels(a.UD)).
			WithAnnotations(OwnerAnnotations(a.UD)).WithSpec(spec)}
}
