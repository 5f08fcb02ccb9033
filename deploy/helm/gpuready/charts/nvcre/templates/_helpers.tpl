{{/*
Names. Namespaced objects are named as upstream's chart names them
(Deployment nvcre-manager, ServiceMonitor nvcre-metrics-monitor);
cluster-scoped ones are prefixed with the release name so that two releases
do not collide.
*/}}
{{- define "nvcre.name" -}}nvcre-manager{{- end -}}

{{- define "nvcre.clusterName" -}}{{ .Release.Name }}-nvcre-manager{{- end -}}

{{- define "nvcre.leaderElectionRole" -}}nvcre-leader-election{{- end -}}

{{- define "nvcre.metricsService" -}}nvcre-manager-metrics{{- end -}}

{{/* The Lease the replicas compete for (gpuready-manager's fixed name, upstream's ID). */}}
{{- define "nvcre.leaseName" -}}240fe9c6.nvidia.com{{- end -}}

{{/* The manager's ServiceAccount: serviceAccount.name, else nvcre-manager
(create: true) or default (create: false). */}}
{{- define "nvcre.serviceAccountName" -}}
{{- $sa := .Values.serviceAccount | default dict -}}
{{- if $sa.create -}}
{{- $sa.name | default (include "nvcre.name" .) -}}
{{- else -}}
{{- $sa.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "nvcre.labels" -}}
app.kubernetes.io/name: nvcre
app.kubernetes.io/component: manager
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: gpuready
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* control-plane: manager is upstream's selector label (its ServiceMonitor
and dashboards select it). */}}
{{- define "nvcre.selectorLabels" -}}
app.kubernetes.io/name: nvcre
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: manager
{{- end -}}

{{/* The manager image: repository@digest, else repository:tag (tag ""
= global.image.tag, else the chart's appVersion). */}}
{{- define "nvcre.image" -}}
{{- $img := .Values.manager.image | default dict -}}
{{- if not $img.repository -}}
{{- fail "nvcre.manager.image.repository must be set (e.g. ghcr.io/gpuready/gpuready-manager)" -}}
{{- end -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $img.repository $img.digest -}}
{{- else -}}
{{- $t := toString ($img.tag | default "") | default (dig "image" "tag" "" (.Values.global | default dict)) | default .Chart.AppVersion -}}
{{- printf "%s:%s" $img.repository $t -}}
{{- end -}}
{{- end -}}

{{/* A Go duration in milliseconds (call with the string). Sub-millisecond
parts count as 0; the schema has checked the syntax. */}}
{{- define "nvcre.durationMs" -}}
{{- $ms := 0.0 -}}
{{- range $p := regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)" (toString .) -1 -}}
{{- $n := float64 (regexFind "^[0-9]+(\\.[0-9]+)?" $p) -}}
{{- $u := regexFind "(ns|us|µs|ms|s|m|h)$" $p -}}
{{- $mul := get (dict "ns" 0.000001 "us" 0.001 "µs" 0.001 "ms" 1.0 "s" 1000.0 "m" 60000.0 "h" 3600000.0) $u -}}
{{- $ms = addf $ms (mulf $n $mul) -}}
{{- end -}}
{{- $ms -}}
{{- end -}}

{{/* The controllers --controllers accepts. */}}
{{- define "nvcre.knownControllers" -}}job,workflow,certification,workloadrun,measurement{{- end -}}

{{/* Refusals: every invalid value combination fails the render with a
message naming the value and the fix. Types, enums and patterns are the
schema's (values.schema.json). */}}
{{- define "nvcre.validate" -}}
{{- $m := .Values.manager | default dict -}}
{{- $img := $m.image | default dict -}}
{{- if regexMatch "(^|/)cluster-readiness-engine/manager$" (toString $img.repository) -}}
{{- fail (printf "nvcre.manager.image.repository %q is upstream NVCRE's manager, which this chart does not run (gpuready-manager has its own flags, e.g. --controllers): remove the key to use ghcr.io/gpuready/gpuready-manager, or name your mirror of it" (toString $img.repository)) -}}
{{- end -}}
{{- $le := $m.leaderElection | default dict -}}
{{- if and (not $le.enabled) (gt (int $m.replicas) 1) -}}
{{- fail (printf "nvcre.manager.leaderElection.enabled is false with nvcre.manager.replicas %d: every replica would run every controller and they would reconcile the same objects at once. Set nvcre.manager.replicas: 1, or keep leader election on" (int $m.replicas)) -}}
{{- end -}}
{{- if $le.enabled -}}
{{- $ld := float64 (include "nvcre.durationMs" $le.leaseDuration) -}}
{{- $rd := float64 (include "nvcre.durationMs" $le.renewDeadline) -}}
{{- $rp := float64 (include "nvcre.durationMs" $le.retryPeriod) -}}
{{- if not (lt $rd $ld) -}}
{{- fail (printf "nvcre.manager.leaderElection.renewDeadline (%s) must be shorter than leaseDuration (%s): a leader must give up before followers may take the Lease" $le.renewDeadline $le.leaseDuration) -}}
{{- end -}}
{{- if not (lt $rp $rd) -}}
{{- fail (printf "nvcre.manager.leaderElection.retryPeriod (%s) must be shorter than renewDeadline (%s): the leader renews every retryPeriod" $le.retryPeriod $le.renewDeadline) -}}
{{- end -}}
{{- if not (gt $rp 0.0) -}}
{{- fail (printf "nvcre.manager.leaderElection.retryPeriod must be a positive duration, got %q" (toString $le.retryPeriod)) -}}
{{- end -}}
{{- end -}}
{{- if not (gt (float64 (include "nvcre.durationMs" $m.workloadCreationDeadline)) 0.0) -}}
{{- fail (printf "nvcre.manager.workloadCreationDeadline must be a positive Go duration such as 10m, got %q" (toString $m.workloadCreationDeadline)) -}}
{{- end -}}
{{- $known := splitList "," (include "nvcre.knownControllers" .) -}}
{{- range $e := splitList "," (toString $m.controllers) -}}
{{- $name := trimPrefix "-" $e -}}
{{- if not (or (eq $e "*") (has $name $known)) -}}
{{- fail (printf "nvcre.manager.controllers: unknown controller %q in %q (known: *, %s; \"-name\" disables one)" $e (toString $m.controllers) (join ", " $known)) -}}
{{- end -}}
{{- end -}}
{{- $mt := .Values.metrics | default dict -}}
{{- if and $mt.enabled (eq (int $mt.port) (int $m.healthProbePort)) -}}
{{- fail (printf "nvcre.metrics.port and nvcre.manager.healthProbePort are both %d: the manager serves them on separate listeners, give them different ports" (int $mt.port)) -}}
{{- end -}}
{{- if and (dig "serviceMonitor" "enabled" false $mt) (not $mt.enabled) -}}
{{- fail "nvcre.metrics.serviceMonitor.enabled needs nvcre.metrics.enabled: true (the ServiceMonitor scrapes the metrics Service)" -}}
{{- end -}}
{{- range $probe := list "livenessProbe" "readinessProbe" -}}
{{- $handlers := list -}}
{{- range $h := list "httpGet" "tcpSocket" "grpc" "exec" -}}
{{- if index ((index $m $probe) | default dict) $h -}}{{- $handlers = append $handlers $h -}}{{- end -}}
{{- end -}}
{{- if gt (len $handlers) 1 -}}
{{- fail (printf "nvcre.manager.%s has %s: a probe has one handler. Helm merges your probe into the chart's default (httpGet), so set httpGet: null next to your own handler to replace it" $probe (join " and " $handlers)) -}}
{{- end -}}
{{- $pp := dig "httpGet" "port" "probes" (index $m $probe | default dict) -}}
{{- if and (not (kindIs "string" $pp)) (ne (int $pp) (int $m.healthProbePort)) -}}
{{- fail (printf "nvcre.manager.%s.httpGet.port is %v, but the manager serves its probes on nvcre.manager.healthProbePort (%v): use the port name probes (the default), or the same number" $probe $pp $m.healthProbePort) -}}
{{- end -}}
{{- end -}}
{{- end -}}
