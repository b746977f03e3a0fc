package integration

import (
	"strings"

	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// invalidUserDeploymentCases break one UserDeployment rule each.
func invalidUserDeploymentCases() []invalidCase {
	return []invalidCase{
		{
			name:  "userdeployment template and image",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Image, u.Spec.ContainerPort = "nginx:1.27", ptr.To[int32](80) }),
			field: "spec", msg: "exactly one of spec.template or spec.image must be set",
		},
		{
			name:  "userdeployment neither template nor image",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Template = "" }),
			field: "spec", msg: "exactly one of spec.template or spec.image must be set",
		},
		{
			name:  "userdeployment containerPort with template",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ContainerPort = ptr.To[int32](8080) }),
			field: "spec.containerPort", msg: "spec.containerPort is required with spec.image and not allowed with spec.template",
		},
		{
			name:  "userdeployment image without containerPort",
			obj:   newImageUserDeployment(func(u *userDeployment) { u.Spec.ContainerPort = nil }),
			field: "spec.containerPort", msg: "spec.containerPort is required with spec.image and not allowed with spec.template",
		},
		{
			name:  "userdeployment replicas with autoscaling",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Replicas = ptr.To[int32](3) }),
			field: "spec.autoscaling", msg: "spec.replicas and spec.autoscaling are mutually exclusive",
		},
		{
			name:  "userdeployment autoscaling min above max",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Autoscaling.MinReplicas = 6 }),
			field: "spec.autoscaling", msg: "autoscaling.minReplicas must not exceed autoscaling.maxReplicas",
		},
		{
			name:  "userdeployment autoscaling target above 100",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Autoscaling.TargetCPUUtilizationPercentage = 101 }),
			field: "spec.autoscaling.targetCPUUtilizationPercentage", msg: "should be less than or equal to 100",
		},
		{
			name:  "userdeployment desiredState not an enum value",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.DesiredState = "paused" }),
			field: "spec.desiredState", msg: `Unsupported value: "paused"`,
		},
		{
			name:  "userdeployment visibility not an enum value",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Visibility = "private" }),
			field: "spec.visibility", msg: `Unsupported value: "private"`,
		},
		{
			name:  "userdeployment userId uppercase",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.UserID = "Alice" }),
			field: "spec.userId", msg: "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
		},
		{
			name:  "userdeployment userId too long",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.UserID = strings.Repeat("a", 41) }),
			field: "spec.userId", msg: "may not be more than 40",
		},
		{
			name:  "userdeployment tier uppercase",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Tier = "Pro" }),
			field: "spec.tier", msg: "should match",
		},
		{
			name:  "userdeployment image with spaces",
			obj:   newImageUserDeployment(func(u *userDeployment) { u.Spec.Image = "ghcr.io/opsnorth/hello 2.0.1" }),
			field: "spec.image", msg: `should match '^[^\s]+$'`,
		},
		{
			name:  "userdeployment containerPort above 65535",
			obj:   newImageUserDeployment(func(u *userDeployment) { u.Spec.ContainerPort = ptr.To[int32](70000) }),
			field: "spec.containerPort", msg: "should be less than or equal to 65535",
		},
		{
			name:  "userdeployment containerPort zero",
			obj:   newImageUserDeployment(func(u *userDeployment) { u.Spec.ContainerPort = ptr.To[int32](0) }),
			field: "spec.containerPort", msg: "should be greater than or equal to 1",
		},
		{
			name:  "userdeployment replicas above 100",
			obj:   newImageUserDeployment(func(u *userDeployment) { u.Spec.Replicas = ptr.To[int32](101) }),
			field: "spec.replicas", msg: "should be less than or equal to 100",
		},
		{
			name:  "userdeployment configData key not an env name",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ConfigData["1LOG-LEVEL"] = "debug" }),
			field: "spec.configData", msg: "keys must be environment variable names",
		},
		{
			name:  "userdeployment serviceConfigData key not a service name",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ServiceConfigData["Worker"] = schedulerv1alpha1.EnvMap{"A": "b"} }),
			field: "spec.serviceConfigData", msg: "serviceConfigData must be keyed by service name",
		},
		{
			name:  "userdeployment serviceConfigData variable not an env name",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ServiceConfigData["worker"]["MAX-JOBS"] = "3" }),
			field: "spec.serviceConfigData[worker]", msg: "keys must be environment variable names",
		},
		{
			name:  "userdeployment serviceConfigFiles key not a service name",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ServiceConfigFiles["web_1"] = u.Spec.ServiceConfigFiles["web"] }),
			field: "spec.serviceConfigFiles", msg: "serviceConfigFiles must be keyed by service name",
		},
		{
			name:  "userdeployment secret name not an env name",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Secrets[0].Name = "database-url" }),
			field: "spec.secrets[0].name", msg: "should match '^[A-Za-z_][A-Za-z0-9_]*$'",
		},
		{
			name:  "userdeployment secret key escaping the user's prefix",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Secrets[0].RemoteRef.Key = "../bob/db" }),
			field: "spec.secrets[0].remoteRef.key", msg: "key must be a relative path without a leading '/' and without empty, '.' or '..' segments",
		},
		{
			name:  "userdeployment secret key absolute",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Secrets[0].RemoteRef.Key = "/users/bob/db" }),
			field: "spec.secrets[0].remoteRef.key", msg: "key must be a relative path",
		},
		{
			name:  "userdeployment secret property with dot-dot",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.Secrets[0].RemoteRef.Property = "a/../b" }),
			field: "spec.secrets[0].remoteRef.property", msg: "property must not start with '/' or have empty, '.' or '..' segments",
		},
		{
			name:  "userdeployment configFiles path relative",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ConfigFiles[0].Path = relativePath }),
			field: "spec.configFiles[0].path", msg: "should match",
		},
		{
			name:  "userdeployment configFiles path with dot-dot",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ConfigFiles[0].Path = "/etc/web-app/../shadow" }),
			field: "spec.configFiles[0].path", msg: "path must be a clean absolute file path without '.', '..' or '//' segments",
		},
		{
			name:  "userdeployment configFiles path ending in dot-dot",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ConfigFiles[0].Path = "/etc/web-app/.." }),
			field: "spec.configFiles[0].path", msg: "path must be a clean absolute file path without '.', '..' or '//' segments",
		},
		{
			name:  "userdeployment configFiles path ending in dot",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ConfigFiles[0].Path = "/etc/web-app/." }),
			field: "spec.configFiles[0].path", msg: "path must be a clean absolute file path",
		},
		{
			name:  "userdeployment configFiles path with dot segment",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ConfigFiles[0].Path = "/etc/./web-app/settings.yaml" }),
			field: "spec.configFiles[0].path", msg: "path must be a clean absolute file path",
		},
		{
			name: "userdeployment deprecated configFile path with double slash",
			obj: newUserDeployment(func(u *userDeployment) {
				u.Spec.ConfigFile = &schedulerv1alpha1.ConfigFile{Path: "/etc//app.conf", Content: "x"} //nolint:staticcheck // the deprecated field is still validated
			}),
			field: "spec.configFile.path", msg: "path must be a clean absolute file path without '.', '..' or '//' segments",
		},
		{
			name:  "userdeployment serviceConfigFiles path with dot-dot",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.ServiceConfigFiles["web"][0].Path = "/../etc/passwd" }),
			field: "spec.serviceConfigFiles[web][0].path", msg: "path must be a clean absolute file path without '.', '..' or '//' segments",
		},
		{
			name: "userdeployment duplicate configFiles path",
			obj: newUserDeployment(func(u *userDeployment) {
				u.Spec.ConfigFiles = append(u.Spec.ConfigFiles, schedulerv1alpha1.ConfigFile{Path: u.Spec.ConfigFiles[0].Path, Content: "y"})
			}),
			field: "spec.configFiles[1]", msg: "Duplicate value",
		},
		{
			name:  "userdeployment dependsOn itself",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.DependsOn = append(u.Spec.DependsOn, u.Name) }),
			field: "spec.dependsOn", msg: "spec.dependsOn cannot name the deployment itself",
		},
		{
			name:  "userdeployment dependsOn not a deployment name",
			obj:   newUserDeployment(func(u *userDeployment) { u.Spec.DependsOn = []string{"Shop DB!"} }),
			field: "spec.dependsOn[0]", msg: "should match",
		},
		{
			name:  "userdeployment name too long",
			obj:   newUserDeployment(func(u *userDeployment) { u.Name = tooLongName }),
			field: objectRoot, msg: "metadata.name must be a DNS label",
		},
		{
			name:  "userdeployment name not a DNS label",
			obj:   newUserDeployment(func(u *userDeployment) { u.Name = dottedName }),
			field: objectRoot, msg: "metadata.name must be a DNS label",
		},
		{
			name:  "userdeployment missing userId",
			obj:   newUserDeployment(nil),
			unset: []string{"spec.userId"},
			field: "spec.userId", msg: "Required value",
		},
		{
			name:   "userdeployment update userId",
			obj:    newUserDeployment(nil),
			update: as(func(u *userDeployment) { u.Spec.UserID = "mallory" }),
			field:  "spec.userId", msg: "userId is immutable",
		},
	}
}
