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

{{/* Labels of every object; the argument is the root context. */}}
{{- define "opsnorth.labels" -}}
app.kubernetes.io/part-of: opsnorth-scheduler
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ include "opsnorth.chart" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Selector labels of a manager's pods: the kustomize bases' own, so that a
Deployment installed with kustomize can be taken over by the chart (a
Deployment's selector cannot change). Argument: the manager's name.
*/}}
{{- define "opsnorth.selectorLabels" -}}
app.kubernetes.io/name: opsnorth-scheduler
app.kubernetes.io/component: {{ . }}
{{- end }}

{{/* Labels of a manager's objects; argument: dict "root" $ "component" name. */}}
{{- define "opsnorth.componentLabels" -}}
{{ include "opsnorth.selectorLabels" .component }}
{{ include "opsnorth.labels" .root }}
{{- end }}

{{/*
The namespace an object of the generated sources goes to: they name the
kustomize namespaces, which the chart maps to .Values.namespaces. Argument:
dict "root" $ "namespace" the generated object's namespace.
*/}}
{{- define "opsnorth.namespace" -}}
{{- if eq .namespace "opsnorth-system" -}}
{{ .root.Values.namespaces.system }}
{{- else if eq .namespace "agent-tasks" -}}
{{ .root.Values.namespaces.tasks }}
{{- else -}}
{{ .namespace }}
{{- end -}}
{{- end }}

{{/*
A generated object read from the chart's files/ (scripts/chart-files), as
YAML with the chart's labels added and its namespace mapped. The admission
policies name the managers' ServiceAccounts in opsnorth-system: they are
renamed into .Values.namespaces.system, as is a binding's paramRef
namespace. Argument: dict "root" $ "path" file "annotations" extra
annotations (may be empty).
*/}}
{{- define "opsnorth.generated" -}}
{{- $text := .root.Files.Get .path | replace "system:serviceaccount:opsnorth-system:" (printf "system:serviceaccount:%s:" .root.Values.namespaces.system) -}}
{{- $obj := fromYaml $text -}}
{{- if or (hasKey $obj "Error") (not (hasKey $obj "kind")) -}}
{{- fail (printf "%s: not a Kubernetes object: %v" .path (get $obj "Error")) -}}
{{- end -}}
{{- $meta := $obj.metadata -}}
{{- $_ := set $meta "labels" (merge (include "opsnorth.labels" .root | fromYaml) (default (dict) $meta.labels)) -}}
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
{{- if eq .Values.namespaces.system .Values.namespaces.tasks -}}
{{- fail "namespaces.system and namespaces.tasks must differ: agent pods must not share the managers' namespace (its Secrets, the step key)" -}}
{{- end -}}
{{- range $c := include "opsnorth.managers" . | fromJsonArray -}}
{{- $m := index $.Values.managers $c -}}
{{- if and $m.enabled (gt (int $m.replicas) 1) (not $m.leaderElection.enabled) -}}
{{- fail (printf "managers.%s: %d replicas need leaderElection.enabled, or they would reconcile the same objects at once" $c (int $m.replicas)) -}}
{{- end -}}
{{- end -}}
{{- end }}
