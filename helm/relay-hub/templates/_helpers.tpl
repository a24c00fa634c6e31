{{/* Chart name, overridable. */}}
{{- define "relay-hub.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name (release-prefixed unless the release name already contains it). */}}
{{- define "relay-hub.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "relay-hub.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "relay-hub.labels" -}}
helm.sh/chart: {{ include "relay-hub.chart" . }}
{{ include "relay-hub.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "relay-hub.selectorLabels" -}}
app.kubernetes.io/name: {{ include "relay-hub.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: hub
{{- end }}

{{- define "relay-hub.redis.fullname" -}}
{{- printf "%s-redis" (include "relay-hub.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "relay-hub.redis.selectorLabels" -}}
app.kubernetes.io/name: {{ include "relay-hub.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end }}

{{/* Secret holding JWT_SECRET, AGENT_API_KEYS and REDIS_URL. */}}
{{- define "relay-hub.secretName" -}}
{{- default (include "relay-hub.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* REDIS_URL of the in-chart Redis. */}}
{{- define "relay-hub.redis.url" -}}
{{- printf "redis://:%s@%s:6379" (.Values.secrets.redisPassword | urlquery) (include "relay-hub.redis.fullname" .) }}
{{- end }}

{{/* SHUTDOWN_GRACE_MS rounded up to seconds. */}}
{{- define "relay-hub.graceSeconds" -}}
{{- div (add (int .Values.shutdown.graceMs) 999) 1000 }}
{{- end }}

{{- define "relay-hub.redis.labels" -}}
helm.sh/chart: {{ include "relay-hub.chart" . }}
{{ include "relay-hub.redis.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
