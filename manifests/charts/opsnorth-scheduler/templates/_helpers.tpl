{{/*
The managers, in the order the chart renders them. Each has its block under
.Values.managers and its objects named opsnorth-scheduler-<manager>: the
generated RBAC, the admission policies and the managers' own code name them
so, which is why the chart offers no name override.
*/}}
{{- define "opsnorth.managers" -}}
{{- toJson (list "deployments" "tasks" "workflows") -}}
{{- end }}

{{- define "opsnorth.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
The recommended labels of every object (app.kubernetes.io/name, instance,
version, component, part-of, managed-by and helm.sh/chart) and
commonLabels. Argument: dict "root" $ "component" the part of the suite the
object belongs to: a manager's name for its own objects, else crds,
policies, task-namespace, reserved-hosts, monitoring, test (or the
component a generated file names).
*/}}
{{- define "opsnorth.labels" -}}
{{ include "opsnorth.selectorLabels" .component }}
app.kubernetes.io/part-of: opsnorth-scheduler
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ include "opsnorth.chart" .root }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Selector labels of a manager's pods: the kustomize bases' own, so that a
Deployment installed with kustomize can be taken over by the chart (a
Deployment's selector cannot change). Argument: the component's name.
*/}}
{{- define "opsnorth.selectorLabels" -}}
app.kubernetes.io/name: opsnorth-scheduler
app.kubernetes.io/component: {{ . }}
{{- end }}

{{/*
The managers' namespace: the release's (helm install -n <namespace>
--create-namespace). The chart never renders that Namespace: Helm (or
whoever made it) owns it.
*/}}
{{- define "opsnorth.systemNamespace" -}}
{{ .Release.Namespace }}
{{- end }}

{{/*
The namespace an object of the generated sources goes to: they name the
kustomize namespaces, which the chart maps to the release namespace and
.Values.namespaces.tasks. Argument: dict "root" $ "namespace" the generated
object's namespace.
*/}}
{{- define "opsnorth.namespace" -}}
{{- if eq .namespace "opsnorth-system" -}}
{{ include "opsnorth.systemNamespace" .root }}
{{- else if eq .namespace "agent-tasks" -}}
{{ .root.Values.namespaces.tasks }}
{{- else -}}
{{ .namespace }}
{{- end -}}
{{- end }}

{{/*
A manager's image: [registry/]repository, then @digest when set (it wins
over the tag), else :tag, else :appVersion. The registry is image.registry,
else global.imageRegistry, else none (the container runtime's default,
Docker Hub). Argument: dict "root" $ "image" the manager's image values.
*/}}
{{- define "opsnorth.image" -}}
{{- $registry := .image.registry | default (dig "imageRegistry" "" (.root.Values.global | default dict)) -}}
{{- $repo := .image.repository -}}
{{- with $registry }}{{ $repo = printf "%s/%s" (trimSuffix "/" .) $repo }}{{ end -}}
{{- if .image.digest -}}
{{ $repo }}@{{ .image.digest }}
{{- else -}}
{{ $repo }}:{{ .image.tag | default .root.Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* The enabled managers, as a JSON list; argument: the root context. */}}
{{- define "opsnorth.enabledManagers" -}}
{{- $out := list -}}
{{- range $c := include "opsnorth.managers" . | fromJsonArray -}}
{{- if (index $.Values.managers $c).enabled }}{{ $out = append $out $c }}{{ end -}}
{{- end -}}
{{- toJson $out -}}
{{- end }}

{{/*
A generated object read from the chart's files/ (scripts/chart-files), as
YAML with the chart's labels added and its namespace mapped. The admission
policies name the managers' ServiceAccounts in opsnorth-system: they are
renamed into the release namespace, as is a binding's paramRef namespace.
Argument: dict "root" $ "path" file "component" its component (unless the
file's labels name one) "annotations" extra annotations (may be empty).
*/}}
{{- define "opsnorth.generated" -}}
{{- $sa := printf "system:serviceaccount:%s:" (include "opsnorth.systemNamespace" .root) -}}
{{- $text := .root.Files.Get .path | replace "system:serviceaccount:opsnorth-system:" $sa -}}
{{- $obj := fromYaml $text -}}
{{- if or (hasKey $obj "Error") (not (hasKey $obj "kind")) -}}
{{- fail (printf "%s: not a Kubernetes object: %v" .path (get $obj "Error")) -}}
{{- end -}}
{{- $meta := $obj.metadata -}}
{{- $own := default (dict) $meta.labels -}}
{{- $component := get $own "app.kubernetes.io/component" | default .component -}}
{{- $_ := set $meta "labels" (merge (include "opsnorth.labels" (dict "root" .root "component" $component) | fromYaml) $own) -}}
{{- with .annotations -}}
{{- $_ := set $meta "annotations" (merge . (default (dict) $meta.annotations)) -}}
{{- end -}}
{{- with $meta.namespace -}}
{{- $_ := set $meta "namespace" (include "opsnorth.namespace" (dict "root" $.root "namespace" .)) -}}
{{- end -}}
{{- with dig "spec" "paramRef" "namespace" "" $obj -}}
{{- $_ := set $obj.spec.paramRef "namespace" (include "opsnorth.namespace" (dict "root" $.root "namespace" .)) -}}
{{- end -}}
{{- toYaml $obj -}}
{{- end }}

{{/* The reserved host labels as RESERVED_HOSTS reads them; argument: the root context. */}}
{{- define "opsnorth.reservedHosts" -}}
{{- join ", " .Values.managers.deployments.reservedHosts -}}
{{- end }}

{{/* The annotations that keep an object on uninstall, if keep. */}}
{{- define "opsnorth.keep" -}}
{{- if . -}}
{{- toJson (dict "helm.sh/resource-policy" "keep") -}}
{{- else -}}
{{- toJson (dict) -}}
{{- end -}}
{{- end }}

{{/* Fails on values the schema cannot refuse alone. */}}
{{- define "opsnorth.validate" -}}
{{- $ns := include "opsnorth.systemNamespace" . -}}
{{- with .Values.namespaces.system -}}
{{- if ne . $ns -}}
{{- fail (printf "namespaces.system (%s) is no longer a value: the managers install into the release namespace (%s). Install with `helm install -n %s --create-namespace`, or drop namespaces.system" . $ns .) -}}
{{- end -}}
{{- end -}}
{{- if has $ns (list "default" "kube-system" "kube-public" "kube-node-lease") -}}
{{- fail (printf "the release namespace is %q: the managers install into it, and the deployments manager may write nothing in kube-* namespaces nor any app in its own. Install with `helm install -n opsnorth-system --create-namespace` (any namespace of the suite's own)" $ns) -}}
{{- end -}}
{{- if eq $ns .Values.namespaces.tasks -}}
{{- fail (printf "namespaces.tasks (%s) must differ from the release namespace: agent pods must not share the managers' namespace (its Secrets, the step key). Set namespaces.tasks or install with another -n" $ns) -}}
{{- end -}}
{{- if and .Values.managers.deployments.enabled (not .Values.managers.deployments.deploymentDomain) -}}
{{- fail "managers.deployments.deploymentDomain is required: the parent DNS domain of the apps' hosts (<name>.<domain>, <name>.int.<domain>). Set it, e.g. --set managers.deployments.deploymentDomain=apps.example.com" -}}
{{- end -}}
{{- range $c := include "opsnorth.managers" . | fromJsonArray -}}
{{- $m := index $.Values.managers $c -}}
{{- if and $m.enabled (gt (int $m.replicas) 1) (not $m.leaderElection.enabled) -}}
{{- fail (printf "managers.%s: %d replicas need leaderElection.enabled, or they would reconcile the same objects at once" $c (int $m.replicas)) -}}
{{- end -}}
{{- end -}}
{{- end }}
