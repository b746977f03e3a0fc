package helm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/action"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

var managers = []string{"deployments", "tasks", "workflows"}

// TestChartLints runs `helm lint --strict` on the chart, with its defaults
// and with every optional object switched on.
func TestChartLints(t *testing.T) {
	for name, set := range map[string][]string{
		"defaults":      nil,
		"everything on": {"monitoring.serviceMonitor.enabled=true", "monitoring.dashboard.enabled=true"},
	} {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = "default"
			lint.KubeVersion = kubeVersion
			result := lint.Run([]string{chartDir}, values(t, set...))
			assert.Equal(t, 1, result.TotalChartsLinted)
			for _, msg := range result.Messages {
				t.Logf("lint: %s", msg)
			}
			assert.Empty(t, result.Errors)
		})
	}
}

// TestDefaultRender checks what the defaults install: the whole suite as
// kustomize/overlays/all-in-one has it, but the ServiceMonitor.
func TestDefaultRender(t *testing.T) {
	out := render(t)
	ch := loadChart(t)
	kinds := out.kinds()
	for kind, n := range map[string]int{
		"Namespace":           1, // the task namespace; the release's is Helm's
		"Deployment":          3,
		"ServiceAccount":      3,
		"Service":             3,
		"PodDisruptionBudget": 3,
		"ClusterRole":         7, // a manager's each, the deployments inventory's, and view, edit, approve
		"ClusterRoleBinding":  4,
		"NetworkPolicy":       1,
		"ServiceMonitor":      0,
		"ConfigMap":           2, // the tasks manager's enforced pod defaults, the reserved hosts
		"ResourceQuota":       1, // no cross-namespace pod affinity in agent-tasks
	} {
		assert.Equal(t, n, kinds[kind], "kind %s", kind)
	}
	generated := &rendered{objs: renderKustomize(t, filepath.Join(repoRoot, "manifests", "crd"))}
	require.NotEmpty(t, generated.objs)
	assert.ElementsMatch(t, generated.names("CustomResourceDefinition"), out.names("CustomResourceDefinition"),
		"the CRDs manifests/crd/kustomization.yaml lists")
	kustomize := &rendered{objs: renderKustomize(t, allInOne)}
	require.NotEmpty(t, kustomize.ofKind("ValidatingAdmissionPolicy"))
	assert.ElementsMatch(t, kustomize.names("ValidatingAdmissionPolicy"), out.names("ValidatingAdmissionPolicy"),
		"the admission policies of the kustomize packaging")
	assert.ElementsMatch(t, out.names("ValidatingAdmissionPolicy"), out.names("ValidatingAdmissionPolicyBinding"))
	assert.ElementsMatch(t, kustomize.names("MutatingAdmissionPolicy"), out.names("MutatingAdmissionPolicy"))
	assert.Equal(t, []string{"opsnorth-scheduler-workflow-creator"}, out.names("MutatingAdmissionPolicyBinding"))
	assert.Equal(t, kinds["Role"], kinds["RoleBinding"], "every Role is bound")

	assertRecommendedLabels(t, ch, out)
	for _, obj := range out.objs {
		if obj.GetKind() == "CustomResourceDefinition" || obj.GetKind() == "Namespace" {
			assert.Equal(t, "keep", obj.GetAnnotations()["helm.sh/resource-policy"], "%s is kept on uninstall", key(obj))
		} else {
			assert.NotContains(t, obj.GetAnnotations(), "helm.sh/resource-policy", "%s", key(obj))
		}
	}
	for _, ns := range out.ofKind("Namespace") {
		assert.Equal(t, "restricted", ns.GetLabels()["pod-security.kubernetes.io/enforce"], "%s", key(ns))
	}
	assert.Nil(t, out.get("Namespace", "", releaseNamespace), "the release namespace is Helm's (--create-namespace), never the chart's")
	for _, c := range managers {
		d := deployment(t, out, "opsnorth-system", c)
		require.Len(t, d.Spec.Template.Spec.Containers, 1)
		container := d.Spec.Template.Spec.Containers[0]
		assert.Equal(t, fmt.Sprintf("opsnorth/scheduler-%s:%s", c, ch.Metadata.AppVersion), container.Image,
			"the image tag defaults to the appVersion")
		assert.Equal(t, corev1.PullIfNotPresent, container.ImagePullPolicy)
		assert.Equal(t, int32(2), *d.Spec.Replicas)
		assert.Contains(t, container.Args, "--leader-elect=true")
		assert.Contains(t, container.Args, "--leader-election-retry-period=500ms")
		assert.Equal(t, "opsnorth-scheduler-"+c, d.Spec.Template.Spec.ServiceAccountName)
		pod := d.Spec.Template.Spec.SecurityContext
		require.NotNil(t, pod)
		assert.Equal(t, &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			pod, "no fixed UID or GID: the image's USER, or the one an arbitrary-UID policy assigns")
		assert.Equal(t, &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}, container.SecurityContext)
	}
	assert.Contains(t, out.notes, "kept on `helm uninstall`")
	assert.Contains(t, out.notes, "kubectl get opsnorth -A", "the notes list the suite's objects by its category")
}

// TestAppVersionIsTheKustomizeImageTag: `make manifests` sets the chart's
// appVersion from the tags kustomize pins; this catches a hand edit.
func TestAppVersionIsTheKustomizeImageTag(t *testing.T) {
	ch := loadChart(t)
	for _, obj := range renderKustomize(t, allInOne) {
		if obj.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d))
		image := d.Spec.Template.Spec.Containers[0].Image
		assert.True(t, strings.HasSuffix(image, ":"+ch.Metadata.AppVersion), "%s: image %s, appVersion %s", key(obj), image, ch.Metadata.AppVersion)
	}
}

// TestRenderVariations renders the chart with the switches users turn and
// checks each does what values.yaml says.
func TestRenderVariations(t *testing.T) {
	defaults := render(t)
	cases := []struct {
		name      string
		namespace string // the release's; empty: releaseNamespace
		set       []string
		check     func(t *testing.T, out *rendered)
	}{
		{
			name: "a manager disabled",
			set:  []string{"managers.tasks.enabled=false"},
			check: func(t *testing.T, out *rendered) {
				for _, obj := range out.objs {
					assert.NotContains(t, obj.GetName(), "opsnorth-scheduler-tasks", "%s of the disabled manager", key(obj))
				}
				assert.NotContains(t, out.names("ValidatingAdmissionPolicy"), "opsnorth-scheduler-tasks-fence",
					"the fence that constrains only the tasks manager goes with it")
				assert.Contains(t, out.names("ValidatingAdmissionPolicy"), "opsnorth-scheduler-step-tasks",
					"shared policies stay")
				assert.Len(t, out.ofKind("CustomResourceDefinition"), len(defaults.ofKind("CustomResourceDefinition")))
				assert.Len(t, out.ofKind("Deployment"), 2)
				assert.NotNil(t, out.get("NetworkPolicy", "agent-tasks", "opsnorth-scheduler-agent-pods"),
					"agent pods keep their policy without the tasks manager")
			},
		},
		{
			name: "pod defaults for every agent",
			set:  []string{`json:managers.tasks.podDefaults={"runtimeClassName":"gvisor","nodeSelector":{"pool":"agents"},"enforce":true}`},
			check: func(t *testing.T, out *rendered) {
				cm := out.get("ConfigMap", "opsnorth-system", "opsnorth-scheduler-tasks-pod-defaults")
				require.NotNil(t, cm)
				data, _, _ := unstructured.NestedString(cm.Object, "data", "pod-defaults.yaml")
				assert.YAMLEq(t, "runtimeClassName: gvisor\nnodeSelector: {pool: agents}\nenforce: true\n"+
					"allowedNodeLabels: [kubernetes.io/arch, kubernetes.io/os, topology.kubernetes.io/zone, topology.kubernetes.io/region, node.kubernetes.io/instance-type]\n", data,
					"values merge into the chart's enforced defaults")
				d := deployment(t, out, "opsnorth-system", "tasks")
				c := d.Spec.Template.Spec.Containers[0]
				assert.Contains(t, c.Env, corev1.EnvVar{Name: "POD_DEFAULTS", Value: "/etc/opsnorth/pod-defaults/pod-defaults.yaml"})
				require.Len(t, c.VolumeMounts, 1)
				assert.Equal(t, "/etc/opsnorth/pod-defaults", c.VolumeMounts[0].MountPath)
				require.Len(t, d.Spec.Template.Spec.Volumes, 1)
				assert.Equal(t, "opsnorth-scheduler-tasks-pod-defaults", d.Spec.Template.Spec.Volumes[0].ConfigMap.Name)
				assert.NotEmpty(t, d.Spec.Template.Annotations["scheduler.opsnorth.io/pod-defaults-checksum"], "a change rolls the pods")
				assert.Empty(t, deployment(t, out, "opsnorth-system", "workflows").Spec.Template.Spec.Volumes, "only the tasks manager reads it")
				assert.Len(t, out.objs, len(defaults.objs))
			},
		},
		{
			name: "crds.install=false",
			set:  []string{"crds.install=false"},
			check: func(t *testing.T, out *rendered) {
				assert.Empty(t, out.ofKind("CustomResourceDefinition"))
				assert.Len(t, out.objs, len(defaults.objs)-len(defaults.ofKind("CustomResourceDefinition")))
				assert.Contains(t, out.notes, "crds.install is off")
			},
		},
		{
			name: "crds.keep=false",
			set:  []string{"crds.keep=false"},
			check: func(t *testing.T, out *rendered) {
				require.NotEmpty(t, out.ofKind("CustomResourceDefinition"))
				for _, crd := range out.ofKind("CustomResourceDefinition") {
					assert.NotContains(t, crd.GetAnnotations(), "helm.sh/resource-policy", "%s", key(crd))
					assert.Contains(t, crd.GetAnnotations(), "controller-gen.kubebuilder.io/version", "generated annotations stay")
				}
				assert.Contains(t, out.notes, "deletes the CRDs")
			},
		},
		{
			name: "namespaces neither created nor kept",
			set:  []string{"namespaces.create=false"},
			check: func(t *testing.T, out *rendered) {
				assert.Empty(t, out.ofKind("Namespace"))
			},
		},
		{
			name: "namespaces.keep=false",
			set:  []string{"namespaces.keep=false"},
			check: func(t *testing.T, out *rendered) {
				require.Len(t, out.ofKind("Namespace"), 1)
				for _, ns := range out.ofKind("Namespace") {
					assert.Empty(t, ns.GetAnnotations(), "%s", key(ns))
				}
			},
		},
		{
			name: "monitoring on",
			set:  []string{"monitoring.serviceMonitor.enabled=true", "monitoring.serviceMonitor.interval=15s", "monitoring.serviceMonitor.labels.release=prometheus", "monitoring.dashboard.enabled=true"},
			check: func(t *testing.T, out *rendered) {
				sm := out.get("ServiceMonitor", "opsnorth-system", "opsnorth-scheduler")
				require.NotNil(t, sm)
				assert.Equal(t, "prometheus", sm.GetLabels()["release"])
				endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
				require.Len(t, endpoints, 1)
				assert.Equal(t, "15s", endpoints[0].(map[string]any)["interval"])
				cm := out.get("ConfigMap", "opsnorth-system", "opsnorth-scheduler-dashboard")
				require.NotNil(t, cm)
				assert.Equal(t, "1", cm.GetLabels()["grafana_dashboard"])
				dashboard, _, _ := unstructured.NestedString(cm.Object, "data", "opsnorth-scheduler.json")
				var v map[string]any
				require.NoError(t, json.Unmarshal([]byte(dashboard), &v), "the dashboard is JSON")
				assert.Contains(t, v, "panels")
			},
		},
		{
			name: "policies and network policy off",
			set:  []string{"policies.enabled=false", "taskNetworkPolicy.enabled=false"},
			check: func(t *testing.T, out *rendered) {
				assert.Empty(t, out.ofKind("ValidatingAdmissionPolicy"))
				assert.Empty(t, out.ofKind("ValidatingAdmissionPolicyBinding"))
				assert.Empty(t, out.ofKind("NetworkPolicy"))
				assert.Contains(t, out.notes, "policies.enabled is off")
			},
		},
		{
			name: "user roles off",
			set:  []string{"userRoles.enabled=false"},
			check: func(t *testing.T, out *rendered) {
				assert.Len(t, out.ofKind("ClusterRole"), 4, "the managers' own and the deployments inventory's")
				assert.NotContains(t, out.names("ClusterRole"), "opsnorth-scheduler-edit")
			},
		},
		{
			name: "mutating policies off, for clusters before Kubernetes 1.36",
			set:  []string{"policies.mutating=false"},
			check: func(t *testing.T, out *rendered) {
				assert.Empty(t, out.ofKind("MutatingAdmissionPolicy"))
				assert.Empty(t, out.ofKind("MutatingAdmissionPolicyBinding"))
				assert.Contains(t, out.names("ValidatingAdmissionPolicy"), "opsnorth-scheduler-approvals")
			},
		},
		{
			name: "extra network policy exceptions",
			set:  []string{"taskNetworkPolicy.extraExcept={203.0.113.10/32,2001:db8::1/128}"},
			check: func(t *testing.T, out *rendered) {
				np := networkPolicy(t, out)
				var v4, v6 []string
				for _, rule := range np.Spec.Egress {
					for _, peer := range rule.To {
						if peer.IPBlock == nil {
							continue
						}
						if strings.Contains(peer.IPBlock.CIDR, ":") {
							v6 = peer.IPBlock.Except
						} else {
							v4 = peer.IPBlock.Except
						}
					}
				}
				assert.Contains(t, v4, "203.0.113.10/32")
				assert.NotContains(t, v4, "2001:db8::1/128")
				assert.Contains(t, v6, "2001:db8::1/128")
				assert.Contains(t, v4, "10.0.0.0/8", "the packaged exceptions stay")
			},
		},
		{
			name:      "another release namespace",
			namespace: "ops",
			set:       []string{"namespaces.tasks=agents"},
			check: func(t *testing.T, out *rendered) {
				assert.NotContains(t, out.manifest, "opsnorth-system", "every reference to the managers' namespace is the release's")
				assert.NotContains(t, out.manifest, "agent-tasks", "every reference to the task namespace follows the value")
				assert.Equal(t, []string{"agents"}, out.names("Namespace"),
					"the task namespace is created, the release namespace never (Helm's --create-namespace owns it)")
				for _, obj := range out.all() {
					if ns := obj.GetNamespace(); ns != "" {
						assert.Contains(t, []string{"ops", "agents"}, ns, "%s", key(obj))
					}
				}
				for _, kind := range []string{"Deployment", "ServiceAccount", "Service", "PodDisruptionBudget", "RoleBinding", "ConfigMap"} {
					for _, obj := range out.ofKind(kind) {
						assert.Equal(t, "ops", obj.GetNamespace(), "%s: the managers' objects land in the release namespace", key(obj))
					}
				}
				assert.Equal(t, "agents", out.get("ResourceQuota", "agents", "opsnorth-scheduler-cross-namespace-affinity").GetNamespace())
				assert.NotNil(t, out.get("Role", "ops", "opsnorth-scheduler-workflows"), "generated Roles follow their namespace")
				assert.Equal(t, "true", out.get("Namespace", "", "agents").GetLabels()["scheduler.opsnorth.io/backend"],
					"the task namespace is the backend namespace")
				assert.Contains(t, out.manifest, "system:serviceaccount:ops:opsnorth-scheduler-workflows",
					"the policies name the ServiceAccounts where they are")
				for _, b := range append(out.ofKind("RoleBinding"), out.ofKind("ClusterRoleBinding")...) {
					subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
					for _, s := range subjects {
						assert.Equal(t, "ops", s.(map[string]any)["namespace"], "%s binds the ServiceAccounts of the release namespace", key(b))
					}
				}
				ref, _, _ := unstructured.NestedString(out.get("ValidatingAdmissionPolicyBinding", "", "opsnorth-scheduler-reserved-hosts").Object,
					"spec", "paramRef", "namespace")
				assert.Equal(t, "ops", ref, "the reserved hosts are read from the release namespace")
				for _, c := range managers {
					d := deployment(t, out, "ops", c)
					for _, e := range d.Spec.Template.Spec.Containers[0].Env {
						assert.NotContains(t, []string{"WATCH_NAMESPACE", "TASK_NAMESPACE", "WORKFLOW_NAMESPACE"}, e.Name,
							"the %s manager serves every bound and backend namespace", c)
					}
					assert.Contains(t, d.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "LEADER_ELECTION_NAMESPACE",
						ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
						"the managers find their own namespace from the pod, not from a constant")
				}
				assert.Equal(t, "agents", networkPolicy(t, out).Namespace)
				assert.Contains(t, out.notes, "Managers in ops (the release namespace)")
			},
		},
		{
			name: "security contexts overridden",
			set: []string{"podSecurityContext.runAsUser=1000710000", "podSecurityContext.fsGroup=1000710000",
				"securityContext.readOnlyRootFilesystem=false", "podSecurityContext.seccompProfile=null"},
			check: func(t *testing.T, out *rendered) {
				for _, c := range managers {
					pod := deployment(t, out, "opsnorth-system", c).Spec.Template.Spec
					assert.Equal(t, &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(1000710000)), FSGroup: ptr(int64(1000710000))},
						pod.SecurityContext, "values merge into the defaults; null drops one")
					assert.Equal(t, &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(false),
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}, pod.Containers[0].SecurityContext)
				}
				test := testPod(t, out)
				assert.Equal(t, ptr(int64(1000710000)), test.Spec.SecurityContext.RunAsUser, "the test pod runs as the managers do")
				assert.Equal(t, ptr(false), test.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem)
			},
		},
		{
			name: "image by digest, registries",
			set: []string{
				"managers.tasks.image.tag=v9.9.9", "managers.tasks.image.digest=sha256:" + strings.Repeat("ab", 32),
				"managers.tasks.image.registry=registry.example.com:5000/mirror",
				"managers.workflows.image.tag=v9.9.9",
				"global.imageRegistry=mirror.example.org",
			},
			check: func(t *testing.T, out *rendered) {
				image := func(c string) string {
					return deployment(t, out, "opsnorth-system", c).Spec.Template.Spec.Containers[0].Image
				}
				assert.Equal(t, "registry.example.com:5000/mirror/opsnorth/scheduler-tasks@sha256:"+strings.Repeat("ab", 32), image("tasks"),
					"the digest wins over the tag; the manager's registry over the global one")
				assert.Equal(t, "mirror.example.org/opsnorth/scheduler-workflows:v9.9.9", image("workflows"))
				assert.Equal(t, "mirror.example.org/opsnorth/scheduler-deployments:"+loadChart(t).Metadata.AppVersion, image("deployments"))
				assert.Contains(t, out.notes, "tasks: 2 replica(s), image registry.example.com:5000/mirror/opsnorth/scheduler-tasks@sha256:")
				assert.Equal(t, image("deployments"), testPod(t, out).Spec.Containers[0].Image, "the test runs in a manager's own image")
			},
		},
		{
			name: "tests off",
			set:  []string{"tests.enabled=false"},
			check: func(t *testing.T, out *rendered) {
				assert.Empty(t, out.hooks)
				assert.Len(t, out.objs, len(defaults.objs), "the release itself is the same")
				assert.NotContains(t, out.notes, "helm test")
			},
		},
		{
			name: "reserved hosts",
			set:  []string{"managers.deployments.reservedHosts={www,shop}"},
			check: func(t *testing.T, out *rendered) {
				cm := out.get("ConfigMap", "opsnorth-system", "opsnorth-scheduler-reserved-hosts")
				require.NotNil(t, cm)
				hosts, _, _ := unstructured.NestedString(cm.Object, "data", "hosts")
				assert.Equal(t, "www, shop", hosts, "the policy's parameters")
				binding := out.get("ValidatingAdmissionPolicyBinding", "", "opsnorth-scheduler-reserved-hosts")
				require.NotNil(t, binding)
				ref, _, _ := unstructured.NestedStringMap(binding.Object, "spec", "paramRef")
				assert.Equal(t, map[string]string{"name": cm.GetName(), "namespace": "opsnorth-system", "parameterNotFoundAction": "Deny"}, ref)
				d := deployment(t, out, "opsnorth-system", "deployments")
				optional := true
				assert.Contains(t, d.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "RESERVED_HOSTS", ValueFrom: &corev1.EnvVarSource{
					ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: cm.GetName()},
						Key: "hosts", Optional: &optional}}}, "the manager's --reserved-hosts, from the same list")
				const checksum = "scheduler.opsnorth.io/reserved-hosts-checksum"
				before := deployment(t, defaults, "opsnorth-system", "deployments").Spec.Template.Annotations[checksum]
				assert.NotEmpty(t, before)
				assert.NotEqual(t, before, d.Spec.Template.Annotations[checksum], "a change rolls the manager")
			},
		},
		{
			name: "no reserved hosts",
			set:  []string{"json:managers.deployments.reservedHosts=[]"},
			check: func(t *testing.T, out *rendered) {
				cm := out.get("ConfigMap", "opsnorth-system", "opsnorth-scheduler-reserved-hosts")
				require.NotNil(t, cm)
				hosts, found, _ := unstructured.NestedString(cm.Object, "data", "hosts")
				assert.True(t, found)
				assert.Empty(t, hosts, "an empty RESERVED_HOSTS reserves none")
			},
		},
		{
			name: "one replica, no PDB",
			set:  []string{"managers.workflows.replicas=1"},
			check: func(t *testing.T, out *rendered) {
				assert.Nil(t, out.get("PodDisruptionBudget", "opsnorth-system", "opsnorth-scheduler-workflows"),
					"minAvailable 1 of one replica would block every drain")
				assert.Len(t, out.ofKind("PodDisruptionBudget"), 2)
				assert.Equal(t, int32(1), *deployment(t, out, "opsnorth-system", "workflows").Spec.Replicas)
			},
		},
		{
			name: "image, args, env, scheduling and leader election",
			set: []string{
				"managers.deployments.image.repository=registry.example.com/ud",
				"managers.deployments.image.tag=v9.9.9",
				"managers.deployments.image.pullPolicy=Always",
				"managers.deployments.args={--namespace-prefix=u,--zap-log-level=debug}",
				"managers.deployments.env[0].name=TIER_CONFIG",
				"managers.deployments.env[0].value=/etc/tiers.yaml",
				"managers.deployments.deploymentDomain=apps.example.org",
				"managers.deployments.leaderElection.leaseDuration=30s",
				"managers.deployments.leaderElection.renewDeadline=20s",
				"managers.deployments.leaderElection.retryPeriod=2s",
				"managers.deployments.nodeSelector.pool=system",
				"managers.deployments.tolerations[0].key=dedicated",
				"managers.deployments.tolerations[0].operator=Exists",
				"managers.deployments.priorityClassName=system-cluster-critical",
				"managers.deployments.resources.limits.memory=1Gi",
				"managers.deployments.kubeAPI.burst=1000000",
				"managers.deployments.gogc=off",
				"managers.deployments.podAnnotations.team=platform",
				"managers.deployments.serviceAccount.annotations.iam=role",
				"imagePullSecrets[0].name=registry",
				"commonLabels.team=platform",
			},
			check: func(t *testing.T, out *rendered) {
				d := deployment(t, out, "opsnorth-system", "deployments")
				pod := d.Spec.Template.Spec
				c := pod.Containers[0]
				assert.Equal(t, "registry.example.com/ud:v9.9.9", c.Image)
				assert.Equal(t, corev1.PullAlways, c.ImagePullPolicy)
				assert.Subset(t, c.Args, []string{
					"--namespace-prefix=u", "--zap-log-level=debug", "--leader-election-lease-duration=30s",
					"--leader-election-renew-deadline=20s", "--leader-election-retry-period=2s",
				})
				assert.Contains(t, c.Env, corev1.EnvVar{Name: "TIER_CONFIG", Value: "/etc/tiers.yaml"})
				assert.Contains(t, c.Env, corev1.EnvVar{Name: "DEPLOYMENT_DOMAIN", Value: "apps.example.org"})
				assert.Contains(t, c.Env, corev1.EnvVar{Name: "KUBE_API_BURST", Value: "1000000"}, "large numbers stay integers")
				assert.Contains(t, c.Env, corev1.EnvVar{Name: "GOGC", Value: "off"})
				assert.Equal(t, "1Gi", c.Resources.Limits.Memory().String())
				assert.Equal(t, "100m", c.Resources.Requests.Cpu().String(), "the other defaults stay")
				assert.Equal(t, map[string]string{"pool": "system"}, pod.NodeSelector)
				assert.Equal(t, []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}, pod.Tolerations)
				assert.Equal(t, "system-cluster-critical", pod.PriorityClassName)
				assert.Equal(t, []corev1.LocalObjectReference{{Name: "registry"}}, pod.ImagePullSecrets)
				assert.Equal(t, "platform", d.Spec.Template.Annotations["team"])
				assert.Equal(t, "role", out.get("ServiceAccount", "opsnorth-system", "opsnorth-scheduler-deployments").GetAnnotations()["iam"])
				for _, obj := range out.objs {
					assert.Equal(t, "platform", obj.GetLabels()["team"], "%s", key(obj))
				}
				tasks := deployment(t, out, "opsnorth-system", "tasks").Spec.Template.Spec.Containers[0]
				assert.Equal(t, "opsnorth/scheduler-tasks:"+loadChart(t).Metadata.AppVersion, tasks.Image, "the other managers keep theirs")
				assert.Contains(t, tasks.Env, corev1.EnvVar{Name: "GOGC", Value: "50"})
			},
		},
		{
			name: "leader election off, one replica",
			set:  []string{"managers.tasks.replicas=1", "managers.tasks.leaderElection.enabled=false"},
			check: func(t *testing.T, out *rendered) {
				args := deployment(t, out, "opsnorth-system", "tasks").Spec.Template.Spec.Containers[0].Args
				assert.Contains(t, args, "--leader-elect=false")
				assert.False(t, slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--leader-election-") }), "%v", args)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, renderIn(t, cmp.Or(tc.namespace, releaseNamespace), tc.set...))
		})
	}
}

func ptr[T any](v T) *T { return &v }

func deployment(t *testing.T, out *rendered, namespace, component string) *appsv1.Deployment {
	t.Helper()
	obj := out.get("Deployment", namespace, "opsnorth-scheduler-"+component)
	require.NotNil(t, obj, "Deployment %s/opsnorth-scheduler-%s", namespace, component)
	var d appsv1.Deployment
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d))
	return &d
}

func networkPolicy(t *testing.T, out *rendered) *networkingv1.NetworkPolicy {
	t.Helper()
	objs := out.ofKind("NetworkPolicy")
	require.Len(t, objs, 1)
	var np networkingv1.NetworkPolicy
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &np))
	return &np
}
