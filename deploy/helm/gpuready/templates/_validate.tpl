{{/*
Refusals that need values outside the subcharts (a subchart only
sees its own values and `global`). Rendered from templates/validate.yaml.
*/}}
{{- define "gpuready.validate" -}}
{{- $g := .Values.global | default dict -}}
{{- $gn := $g.nvcre | default dict -}}
{{- if not (kindIs "bool" $gn.enabled) -}}
{{- fail (printf "global.nvcre.enabled must be true or false (a YAML boolean), got %v (%s)" $gn.enabled (kindOf $gn.enabled)) -}}
{{- end -}}
{{- $gp := $g.preflight | default dict -}}
{{- if not (kindIs "bool" $gp.enabled) -}}
{{- fail (printf "global.preflight.enabled must be true or false (a YAML boolean), got %v (%s)" $gp.enabled (kindOf $gp.enabled)) -}}
{{- end -}}
{{- if $gp.enabled -}}
{{- $p := .Values.preflight | default dict -}}
{{- $publishTo := $p.publishTo | default "socket" -}}
{{- if eq (toString $publishTo) "deployment" -}}
{{- $pc := .Values.platformConnector | default dict -}}
{{- $dep := $pc.deployment | default dict -}}
{{- if not (and (kindIs "bool" $dep.enabled) $dep.enabled) -}}
{{- fail "preflight.publishTo: deployment needs the deployment platform connector: set platformConnector.deployment.enabled: true, or use preflight.publishTo: socket" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
