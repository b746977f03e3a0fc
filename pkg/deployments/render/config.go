package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// EnvConfigMapName names the ConfigMap of a service's environment variables.
func EnvConfigMapName(ud *v1alpha1.UserDeployment, service string) string {
	return Name(ud.Name, service, "env")
}

// FilesConfigMapName names the ConfigMap of a service's mounted files.
func FilesConfigMapName(ud *v1alpha1.UserDeployment, service string) string {
	return Name(ud.Name, service, "files")
}

// SecretName names the ExternalSecret and the Secret it syncs.
func SecretName(ud *v1alpha1.UserDeployment) string { return Name(ud.Name, "secrets") }

// Env merges a service's variables: the template's env, then configData,
// then serviceConfigData (later wins).
func Env(ud *v1alpha1.UserDeployment, svc v1alpha1.TemplateService) map[string]string {
	out := map[string]string{}
	for _, e := range svc.Env {
		out[e.Name] = e.Value
	}
	maps.Copy(out, ud.Spec.ConfigData)
	maps.Copy(out, ud.Spec.ServiceConfigData[svc.Name])
	return out
}

// File is one mounted file: its ConfigMap key and content.
type File struct {
	Path    string
	Key     string
	Content string
}

// Files merges a service's files by path: configFile, then configFiles, then
// serviceConfigFiles (later wins); sorted by path.
func Files(ud *v1alpha1.UserDeployment, service string) []File {
	byPath := map[string]string{}
	if f := ud.Spec.ConfigFile; f != nil { //nolint:staticcheck // configFile is deprecated but still honoured for old clients.
		byPath[f.Path] = f.Content
	}
	for _, f := range ud.Spec.ConfigFiles {
		byPath[f.Path] = f.Content
	}
	for _, f := range ud.Spec.ServiceConfigFiles[service] {
		byPath[f.Path] = f.Content
	}
	out := make([]File, 0, len(byPath))
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		out = append(out, File{Path: p, Key: "file-" + Hash(p, 12), Content: byPath[p]})
	}
	return out
}

// ConfigMaps are a service's env and files ConfigMaps, each only when non-empty.
func ConfigMaps(a *App, svc v1alpha1.TemplateService) []Child {
	var out []Child
	if env := Env(a.UD, svc); len(env) > 0 {
		out = append(out, workload(a, svc).ConfigMap(EnvConfigMapName(a.UD, svc.Name), env))
	}
	if files := Files(a.UD, svc.Name); len(files) > 0 {
		data := make(map[string]string, len(files))
		for _, f := range files {
			data[f.Key] = f.Content
		}
		out = append(out, workload(a, svc).ConfigMap(FilesConfigMapName(a.UD, svc.Name), data))
	}
	return out
}

// ConfigHash changes whenever a service's env, files or secret references
// change, so its pods roll.
func ConfigHash(ud *v1alpha1.UserDeployment, svc v1alpha1.TemplateService) string {
	data, _ := json.Marshal([]any{Env(ud, svc), Files(ud, svc.Name), ud.Spec.Secrets})
	return Hash(string(data), 16)
}

// ExternalSecret syncs the requested secrets into one Secret, whose keys are
// the environment variable names. Each remote key is resolved under the
// user's prefix (Options.SecretKeyPrefix); a prefix or a reference that
// could leave it is an error wrapping ErrSecretKeyNotAllowed, and no
// ExternalSecret is rendered.
func ExternalSecret(a *App, o Options) (Child, error) {
	if err := CheckSecretKeyPrefix(o.SecretKeyPrefix); err != nil {
		return Child{}, fmt.Errorf("%w: secret key prefix: %w", ErrSecretKeyNotAllowed, err)
	}
	prefix := SecretKeyPrefix(o.SecretKeyPrefix, a.UD.Spec.UserID)
	if err := CheckSecretRefs(a.UD.Spec.Secrets, prefix); err != nil {
		return Child{}, err
	}
	data := make([]any, 0, len(a.UD.Spec.Secrets))
	for _, s := range a.UD.Spec.Secrets {
		ref := map[string]any{"key": prefix + s.RemoteRef.Key}
		if s.RemoteRef.Property != "" {
			ref["property"] = s.RemoteRef.Property
		}
		if s.RemoteRef.Version != "" {
			ref["version"] = s.RemoteRef.Version
		}
		data = append(data, map[string]any{"secretKey": s.Name, "remoteRef": ref})
	}
	name := SecretName(a.UD)
	spec := map[string]any{
		"refreshInterval": "1h",
		"secretStoreRef":  map[string]any{"kind": "ClusterSecretStore", "name": o.ClusterSecretStore},
		"target":          map[string]any{"name": name, "creationPolicy": "Owner"},
		"data":            data,
	}
	return Child{GVK: GVKExternalSecret, Namespace: a.Namespace, Name: name,
		Object: newUnstructured(GVKExternalSecret, a.Namespace, name, AppLabels(a.UD), OwnerAnnotations(a.UD), spec)}, nil
}
