{{/*
Names. The Deployment, Service, ConfigMap and ServiceAccount are all called
`preflight` (PF-12, PF-107); cluster-scoped objects are prefixed with the
release name so two releases do not collide.
*/}}
{{- define "preflight.name" -}}preflight{{- end -}}

{{- define "preflight.clusterName" -}}{{ .Release.Name }}-preflight{{- end -}}

{{- define "preflight.gangDiscoveryRole" -}}{{ .Release.Name }}-gang-discovery{{- end -}}

{{- define "preflight.tlsSecret" -}}preflight-webhook-tls{{- end -}}

{{/*
MutatingWebhookConfiguration: the object is `preflight` and its one webhook
`preflight.nvsentinel.nvidia.com`, both as upstream names them, so a user
migrating from NVSentinel's chart replaces upstream's webhook instead of
running two. webhook.configurationName overrides the object's name.
*/}}
{{- define "preflight.webhookConfigName" -}}
{{- (.Values.webhook | default dict).configurationName | default "preflight" -}}
{{- end -}}

{{- define "preflight.webhookName" -}}preflight.nvsentinel.nvidia.com{{- end -}}

{{/* The webhook's ServiceAccount: serviceAccount.name, else `preflight`
(create: true) or `default` (create: false), as upstream. */}}
{{- define "preflight.serviceAccountName" -}}
{{- $sa := .Values.serviceAccount | default dict -}}
{{- if $sa.create -}}
{{- $sa.name | default (include "preflight.name" .) -}}
{{- else -}}
{{- $sa.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/*
Settings of the deployment platform connector that every publisher shares,
read from global.platformConnectorDeployment as upstream's charts do:
tls.mode (required | insecureDevelopmentMode, default required) and grpcPort
(default 50051). The CA comes from the Secret the connector's cert-manager
Certificate writes, platform-connector-deployment-grpc-cert (cert-manager
copies the issuing CA into its ca.crt).
*/}}
{{- define "preflight.pcdTlsMode" -}}
{{- $pcd := dig "platformConnectorDeployment" dict (.Values.global | default dict) -}}
{{- $mode := dig "tls" "mode" "required" ($pcd | default dict) | default "required" -}}
{{- if not (has (toString $mode) (list "required" "insecureDevelopmentMode")) -}}
{{- fail (printf "global.platformConnectorDeployment.tls.mode must be \"required\" or \"insecureDevelopmentMode\", got %q" (toString $mode)) -}}
{{- end -}}
{{- $mode -}}
{{- end -}}

{{- define "preflight.pcdGrpcPort" -}}
{{- $pcd := dig "platformConnectorDeployment" dict (.Values.global | default dict) -}}
{{- $port := ($pcd | default dict).grpcPort | default 50051 -}}
{{- if or (not (or (kindIs "float64" $port) (kindIs "int" $port) (kindIs "int64" $port))) (lt (float64 $port) 1.0) (gt (float64 $port) 65535.0) (ne (float64 (int $port)) (float64 $port)) -}}
{{- fail (printf "global.platformConnectorDeployment.grpcPort must be a port number (1-65535), got %v" $port) -}}
{{- end -}}
{{- int $port -}}
{{- end -}}

{{/* "true" when direct-mode checks skip TLS: the connector runs
tls.mode insecureDevelopmentMode (or healthPublish.insecure: true, which must
agree with it). */}}
{{- define "preflight.publishInsecure" -}}
{{- $hp := .Values.healthPublish | default dict -}}
{{- or (eq (include "preflight.pcdTlsMode" .) "insecureDevelopmentMode") (eq (toString $hp.insecure) "true") -}}
{{- end -}}

{{/* The Secret holding the connector's CA (publishTo: deployment, TLS). */}}
{{- define "preflight.caSecretName" -}}
{{- $hp := .Values.healthPublish | default dict -}}
{{- $hp.caSecretName | default "platform-connector-deployment-grpc-cert" -}}
{{- end -}}

{{/*
Idle command of the image-cache container for one check (dict "c" entry
"ctx" $): the entry's imageCacheCommand, else imageCache.holdCommand when
set, else gpuready-idle for gpuready's images and upstream's shell loop for
NVSentinel's images (a repository with an `nvsentinel/` path segment), which
have /bin/sh but not gpuready-idle. Output: JSON list.
*/}}
{{- define "preflight.holdCommand" -}}
{{- $c := .c -}}
{{- $ic := .ctx.Values.imageCache | default dict -}}
{{- if $c.imageCacheCommand -}}
{{- toJson $c.imageCacheCommand -}}
{{- else if $ic.holdCommand -}}
{{- toJson $ic.holdCommand -}}
{{- else -}}
{{- $ref := include "preflight.imageRef" (dict "image" $c.image "ctx" .ctx "field" "initContainers[].image") -}}
{{- if regexMatch "(^|/)nvsentinel/" $ref -}}
{{- toJson (list "/bin/sh" "-c" "trap 'exit 0' TERM INT; sleep infinity & wait $!") -}}
{{- else -}}
{{- toJson (list "/usr/local/bin/gpuready-idle") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "preflight.topoConfigMap" -}}preflight-nccl-topo{{- end -}}

{{- define "preflight.labels" -}}
app.kubernetes.io/name: preflight
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: nvsentinel
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "preflight.selectorLabels" -}}
app.kubernetes.io/name: preflight
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The tag used when an image's own tag is "": global.image.tag, else appVersion. */}}
{{- define "preflight.defaultTag" -}}
{{- $t := dig "image" "tag" "" (.Values.global | default dict) -}}
{{- $t | default .Chart.AppVersion -}}
{{- end -}}

{{/*
Image reference from a string or a {repository, tag} map (PF-16, PF-63).
Call with (dict "image" $img "ctx" $ "field" "initContainers[0].image").
*/}}
{{- define "preflight.imageRef" -}}
{{- $img := .image -}}
{{- if kindIs "string" $img -}}
{{- if eq $img "" -}}{{- fail (printf "preflight.%s must not be empty" .field) -}}{{- end -}}
{{- $img -}}
{{- else if kindIs "map" $img -}}
{{- if not $img.repository -}}
{{- fail (printf "preflight.%s.repository must be set (or give the image as a string)" .field) -}}
{{- end -}}
{{- $tag := toString ($img.tag | default "") | default (include "preflight.defaultTag" .ctx) -}}
{{- printf "%s:%s" $img.repository $tag -}}
{{- else -}}
{{- fail (printf "preflight.%s must be a string or a {repository, tag} map" .field) -}}
{{- end -}}
{{- end -}}

{{/* Auth settings from global.platformConnectorAuth; `enabled` must be a real boolean. */}}
{{- define "preflight.authEnabled" -}}
{{- $g := .Values.global | default dict -}}
{{- $a := $g.platformConnectorAuth -}}
{{- if not (hasKey $g "platformConnectorAuth") -}}true
{{- else if not (kindIs "map" $a) -}}
{{- fail (printf "global.platformConnectorAuth must be a map with enabled: true or false, got %v" $a) -}}
{{- else if and (hasKey $a "enabled") (kindIs "bool" $a.enabled) -}}{{ $a.enabled }}
{{- else -}}
{{- fail (printf "global.platformConnectorAuth.enabled must be true or false (a YAML boolean, not a string, number or null), got %v (%s)" $a.enabled (kindOf $a.enabled)) -}}
{{- end -}}
{{- end -}}

{{/* "true" when gang coordination is on. */}}
{{- define "preflight.gangEnabled" -}}
{{- $gc := .Values.gangCoordination | default dict -}}
{{- if not (kindIs "bool" $gc.enabled) -}}
{{- fail (printf "preflight.gangCoordination.enabled must be true or false, got %v" $gc.enabled) -}}
{{- end -}}
{{- $gc.enabled -}}
{{- end -}}

{{/* Refusals: every invalid value combination fails the render with a message naming the value and the fix. */}}
{{- define "preflight.validate" -}}
{{- $v := .Values -}}
{{- /* Kubernetes >= 1.30 (the webhook pod's `sleep` preStop action). Checked
here rather than by Chart.yaml's kubeVersion so that the message can name
the flag: `helm template` and `helm lint` assume v1.20.0 unless told. */ -}}
{{- if not (semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version) -}}
{{- fail (printf "preflight needs Kubernetes >= 1.30, but this render targets %s: `helm template` and `helm lint` assume v1.20.0 unless you pass --kube-version (e.g. --kube-version 1.36.0, your cluster's version); `helm install` reads the version from the cluster" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- $img := $v.image | default dict -}}
{{- if and (kindIs "map" $img) (regexMatch "(^|/)nvsentinel/preflight$" (toString $img.repository)) -}}
{{- fail (printf "preflight.image.repository %q is upstream NVSentinel's webhook, which this chart does not run (gpuready's webhook has its own program, flags and config): remove the key to use ghcr.io/gpuready/preflight, or name your mirror of it. Upstream's check images in preflight.initContainers work unchanged" (toString $img.repository)) -}}
{{- end -}}
{{- $svc := $v.service | default dict -}}
{{- if and (hasKey $svc "targetPort") (not (or (eq (toString $svc.targetPort) "https") (and (not (kindIs "string" $svc.targetPort)) (eq (int $svc.targetPort) (int ($v.webhook | default dict).port))))) -}}
{{- fail (printf "preflight.service.targetPort must be the webhook's port, preflight.webhook.port (%v), or its name https; got %v. The webhook listens on webhook.port: change that to move it" ($v.webhook | default dict).port $svc.targetPort) -}}
{{- end -}}
{{- $w := $v.webhook | default dict -}}
{{- if not (has (toString $w.failurePolicy) (list "Fail" "Ignore")) -}}
{{- fail (printf "preflight.webhook.failurePolicy must be Fail or Ignore, got %q" (toString $w.failurePolicy)) -}}
{{- end -}}
{{- $to := $w.timeoutSeconds -}}
{{- if or (not (or (kindIs "float64" $to) (kindIs "int" $to) (kindIs "int64" $to))) (lt (float64 $to) 1.0) (gt (float64 $to) 30.0) (ne (float64 (int $to)) (float64 $to)) -}}
{{- fail (printf "preflight.webhook.timeoutSeconds must be a whole number of seconds from 1 to 30 (the Kubernetes maximum), got %v" $to) -}}
{{- end -}}
{{- $port := $w.port -}}
{{- if or (not (or (kindIs "float64" $port) (kindIs "int" $port) (kindIs "int64" $port))) (lt (float64 $port) 1.0) (gt (float64 $port) 65535.0) -}}
{{- fail (printf "preflight.webhook.port must be a port number (1-65535), got %v" $port) -}}
{{- end -}}
{{- $prov := toString ($w.certProvider | default "cert-manager") -}}
{{- if not (has $prov (list "cert-manager" "openshift-service-ca")) -}}
{{- fail (printf "preflight.webhook.certProvider must be cert-manager or openshift-service-ca, got %q" $prov) -}}
{{- end -}}
{{- if not (kindIs "bool" $w.createIssuer) -}}
{{- fail (printf "preflight.webhook.createIssuer must be true or false, got %v" $w.createIssuer) -}}
{{- end -}}
{{- if and (eq $prov "cert-manager") (not $w.createIssuer) (not $w.certIssuer) -}}
{{- fail "preflight.webhook.certIssuer must name an existing cert-manager issuer when preflight.webhook.createIssuer is false (and set caCertificateName so the API server can verify the webhook)" -}}
{{- end -}}
{{- if not (has (toString ($w.certIssuerKind | default "Issuer")) (list "Issuer" "ClusterIssuer")) -}}
{{- fail (printf "preflight.webhook.certIssuerKind must be Issuer or ClusterIssuer, got %q" (toString $w.certIssuerKind)) -}}
{{- end -}}
{{- if hasKey $v "dcgm" -}}
{{- fail "preflight.dcgm is the DCGM block of older upstream charts, which this chart does not read: set DCGM_HOSTENGINE_ADDR (endpoint:port) and DCGM_DIAG_LEVEL in the env of the preflight-dcgm-diag entry of preflight.initContainers, and processingStrategy at preflight.processingStrategy; then remove preflight.dcgm" -}}
{{- end -}}
{{- range $probe := list "livenessProbe" "readinessProbe" -}}
{{- $handlers := list -}}
{{- range $h := list "httpGet" "tcpSocket" "grpc" "exec" -}}
{{- if index ((index $v $probe) | default dict) $h -}}{{- $handlers = append $handlers $h -}}{{- end -}}
{{- end -}}
{{- if gt (len $handlers) 1 -}}
{{- fail (printf "preflight.%s has %s: a probe has one handler. Helm merges your probe into the chart's default (httpGet on /healthz), so set httpGet: null next to your own handler to replace it" $probe (join " and " $handlers)) -}}
{{- end -}}
{{- $pp := dig "httpGet" "port" "https" (index $v $probe | default dict) -}}
{{- if and (not (kindIs "string" $pp)) (ne (int $pp) (int $w.port)) -}}
{{- fail (printf "preflight.%s.httpGet.port is %v, but the webhook listens on preflight.webhook.port (%v): use the port name https (the default), or the same number" $probe $pp $w.port) -}}
{{- end -}}
{{- end -}}
{{- $auth := include "preflight.authEnabled" . -}}
{{- $pub := toString ($v.publishTo | default "socket") -}}
{{- if not (has $pub (list "socket" "deployment")) -}}
{{- fail (printf "preflight.publishTo must be socket or deployment, got %q" $pub) -}}
{{- end -}}
{{- if and (eq $pub "deployment") (ne $auth "true") -}}
{{- fail "preflight.publishTo: deployment needs platform-connector auth: set global.platformConnectorAuth.enabled: true, or use preflight.publishTo: socket" -}}
{{- end -}}
{{- $hpv := $v.healthPublish | default dict -}}
{{- $tlsMode := include "preflight.pcdTlsMode" . -}}
{{- $_ := include "preflight.pcdGrpcPort" . -}}
{{- if and (eq $pub "deployment") (eq (toString $hpv.insecure) "true") (eq $tlsMode "required") -}}
{{- fail "preflight.healthPublish.insecure: true contradicts global.platformConnectorDeployment.tls.mode: required (the deployment platform connector serves TLS, so plaintext checks could not reach it): remove healthPublish.insecure, or set global.platformConnectorDeployment.tls.mode: insecureDevelopmentMode on a development cluster whose connector runs without TLS" -}}
{{- end -}}
{{- if not (kindIs "bool" $v.hostNetworkWorkloads) -}}
{{- fail (printf "preflight.hostNetworkWorkloads must be true or false, got %v" $v.hostNetworkWorkloads) -}}
{{- end -}}
{{- if not (has (toString $v.initContainerPlacement) (list "append" "prepend")) -}}
{{- fail (printf "preflight.initContainerPlacement must be \"append\" or \"prepend\", got %q" (toString $v.initContainerPlacement)) -}}
{{- end -}}
{{- if not (has (toString $v.processingStrategy) (list "EXECUTE_REMEDIATION" "STORE_ONLY")) -}}
{{- fail (printf "preflight.processingStrategy must be EXECUTE_REMEDIATION or STORE_ONLY, got %q" (toString $v.processingStrategy)) -}}
{{- end -}}
{{- $gang := include "preflight.gangEnabled" . -}}
{{- $gc := $v.gangCoordination | default dict -}}
{{- $shape := toString ($gc.ncclTopoShape | default "") -}}
{{- if not (has $shape (list "" "ndv4" "ndv5")) -}}
{{- fail (printf "preflight.gangCoordination.ncclTopoShape must be \"\", \"ndv4\" or \"ndv5\", got %q" $shape) -}}
{{- end -}}
{{- if and $shape $gc.ncclTopoConfigMap -}}
{{- fail "preflight.gangCoordination: set either ncclTopoConfigMap (an existing ConfigMap) or ncclTopoShape (ndv4/ndv5, bundled topology), not both" -}}
{{- end -}}
{{- $gd := $v.gangDiscovery | default dict -}}
{{- if not (kindIs "map" $gd) -}}
{{- fail "preflight.gangDiscovery must be a map ({} for native Kubernetes discovery)" -}}
{{- end -}}
{{- if $gd -}}
{{- $gvr := $gd.podGroupGVR | default dict -}}
{{- if or (not $gd.name) (not (or $gd.annotationKeys $gd.labelKeys)) (not $gvr.group) (not $gvr.version) (not $gvr.resource) -}}
{{- fail (printf "preflight.gangDiscovery: a PodGroup discoverer needs name, annotationKeys and/or labelKeys, and podGroupGVR {group, version, resource} (got name %q); use {} for native Kubernetes discovery" (toString ($gd.name | default ""))) -}}
{{- end -}}
{{- end -}}
{{- if not (kindIs "slice" $v.initContainers) -}}
{{- fail "preflight.initContainers must be a list of containers" -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $i, $c := $v.initContainers -}}
{{- if not (kindIs "map" $c) -}}
{{- fail (printf "preflight.initContainers[%d] must be a container (a map)" $i) -}}
{{- end -}}
{{- if not $c.name -}}
{{- fail (printf "preflight.initContainers[%d].name must be set" $i) -}}
{{- end -}}
{{- if hasKey $seen (toString $c.name) -}}
{{- fail (printf "preflight.initContainers: duplicate init container name %q" (toString $c.name)) -}}
{{- end -}}
{{- $_ := set $seen (toString $c.name) true -}}
{{- if not (hasKey $c "image") -}}
{{- fail (printf "preflight.initContainers[%d].image must be set" $i) -}}
{{- end -}}
{{- end -}}
{{- $ic := $v.imageCache | default dict -}}
{{- if not (kindIs "bool" $ic.enabled) -}}
{{- fail (printf "preflight.imageCache.enabled must be true or false, got %v" $ic.enabled) -}}
{{- end -}}
{{- end -}}

{{/*
The init containers as written to config.yaml: image resolved to "repo:tag",
ncclAllreduceExtraEnv appended to preflight-nccl-allreduce (replacing
same-named entries), chart-only keys removed. Output: JSON list.
*/}}
{{- define "preflight.initContainersJson" -}}
{{- $out := list -}}
{{- $extra := .Values.ncclAllreduceExtraEnv | default list -}}
{{- range $i, $c := .Values.initContainers -}}
{{- $c2 := omit $c "imageCacheCommand" -}}
{{- $_ := set $c2 "image" (include "preflight.imageRef" (dict "image" $c.image "ctx" $ "field" (printf "initContainers[%d].image" $i))) -}}
{{- if and (eq (toString $c.name) "preflight-nccl-allreduce") $extra -}}
{{- $names := dict -}}
{{- range $extra -}}{{- $_ := set $names (toString .name) true -}}{{- end -}}
{{- $env := list -}}
{{- range ($c.env | default list) -}}
{{- if not (hasKey $names (toString .name)) -}}{{- $env = append $env . -}}{{- end -}}
{{- end -}}
{{- $_ := set $c2 "env" (concat $env $extra) -}}
{{- end -}}
{{- $out = append $out $c2 -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* "true" when the webhook runs the CA bundle sync (publishTo: deployment
without healthPublish.insecure): it mounts healthPublish.caSecretName at
/etc/preflight-ca and copies ca.crt into every injected namespace
(PF-171..PF-174). */}}
{{- define "preflight.caSync" -}}
{{- and (eq (toString .Values.publishTo) "deployment") (ne (include "preflight.publishInsecure" .) "true") -}}
{{- end -}}

{{/* The health-publish target for publishTo: deployment: healthPublish.target,
else the deployment platform connector's Service in the release namespace on
global.platformConnectorDeployment.grpcPort. */}}
{{- define "preflight.healthPublishTarget" -}}
{{- $hp := .Values.healthPublish | default dict -}}
{{- $hp.target | default (printf "platform-connector-deployment.%s.svc.cluster.local:%s" .Release.Namespace (include "preflight.pcdGrpcPort" .)) -}}
{{- end -}}

{{/* config.yaml of ConfigMap `preflight` (keys: docs/webhook.md). */}}
{{- define "preflight.config" -}}
{{- $v := .Values -}}
{{- $cfg := dict -}}
{{- $_ := set $cfg "gpuResourceNames" ($v.gpuResourceNames | default list) -}}
{{- $_ := set $cfg "networkResourceNames" ($v.networkResourceNames | default list) -}}
{{- $_ := set $cfg "ncclEnvPatterns" ($v.ncclEnvPatterns | default list) -}}
{{- $_ := set $cfg "volumeMountPatterns" ($v.volumeMountPatterns | default list) -}}
{{- /* connectorSocket; left at its default, it follows NVSentinel's
global.socketPath (unix://<socketPath>), as upstream's chart derives it. */ -}}
{{- $sock := toString ($v.connectorSocket | default "") -}}
{{- $gsock := toString (dig "socketPath" "" (.Values.global | default dict)) -}}
{{- if and $gsock (eq $sock "unix:///var/run/nvsentinel.sock") -}}
{{- $sock = printf "unix://%s" $gsock -}}
{{- end -}}
{{- $_ := set $cfg "connectorSocket" $sock -}}
{{- $_ := set $cfg "processingStrategy" $v.processingStrategy -}}
{{- if eq (include "preflight.authEnabled" .) "true" -}}
{{- $a := dig "platformConnectorAuth" dict (.Values.global | default dict) -}}
{{- $_ := set $cfg "connectorTokenAudience" ($a.audience | default "platform-connector.nvsentinel.nvidia.com") -}}
{{- $_ := set $cfg "connectorTokenMountPath" ($a.tokenMountPath | default "/var/run/secrets/nvsentinel/platform-connector") -}}
{{- $_ := set $cfg "connectorTokenExpirationSeconds" (int ($a.tokenExpirationSeconds | default 3600)) -}}
{{- end -}}
{{- $_ := set $cfg "initContainerPlacement" $v.initContainerPlacement -}}
{{- $_ := set $cfg "imagePullSecrets" ($v.injectedImagePullSecrets | default list) -}}
{{- $pub := toString ($v.publishTo | default "socket") -}}
{{- $_ := set $cfg "publishTo" $pub -}}
{{- if eq $pub "deployment" -}}
{{- $hp := $v.healthPublish | default dict -}}
{{- $insecure := eq (include "preflight.publishInsecure" .) "true" -}}
{{- $hpc := dict "target" (include "preflight.healthPublishTarget" .) "insecure" $insecure -}}
{{- if not $insecure -}}
{{- $_ := set $hpc "caFile" "/etc/preflight-ca/ca.crt" -}}
{{- $_ := set $hpc "namespaceSelector" ($v.namespaceSelector | default dict) -}}
{{- end -}}
{{- $_ := set $cfg "healthPublish" $hpc -}}
{{- end -}}
{{- $_ := set $cfg "gangDiscovery" ($v.gangDiscovery | default dict) -}}
{{- $gc := deepCopy ($v.gangCoordination | default dict) -}}
{{- $gc = omit $gc "ncclTopoShape" -}}
{{- $shape := toString ($v.gangCoordination.ncclTopoShape | default "") -}}
{{- if $shape -}}
{{- $_ := set $gc "ncclTopoConfigMap" (include "preflight.topoConfigMap" .) -}}
{{- $_ := set $gc "ncclTopoShape" $shape -}}
{{- $_ := set $gc "ncclTopoData" (.Files.Get (printf "files/%s-topo.xml" $shape)) -}}
{{- end -}}
{{- $_ := set $cfg "gangCoordination" $gc -}}
{{- $_ := set $cfg "initContainers" (include "preflight.initContainersJson" . | fromJsonArray) -}}
{{- toYaml $cfg -}}
{{- end -}}
