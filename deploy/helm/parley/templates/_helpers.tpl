{{/* The chart's name, shortened to what a label value allows. */}}
{{- define "parley.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's resource names start with this. */}}
{{- define "parley.fullname" -}}
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

{{- define "parley.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "parley.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels of the server's pods and what selects them; the migration job's pods carry other component labels, so no Service routes to them. */}}
{{- define "parley.selectorLabels" -}}
app.kubernetes.io/name: {{ include "parley.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "parley.serverSelectorLabels" -}}
{{ include "parley.selectorLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{- define "parley.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "parley.fullname" .) }}
{{- end }}

{{- define "parley.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
The environment of the server and of the migration job: one list, so the job
validates the same settings the replicas will read before any replica
changes.
*/}}
{{- define "parley.env" -}}
{{- $owned := list "PARLEY_ADDR" "PARLEY_METRICS_ADDR" "PARLEY_MIGRATE" "PARLEY_TRUSTED_PROXIES" "PARLEY_REDIS_URL" "PARLEY_REDIS_FAIL" "PARLEY_DATABASE_URL" "PARLEY_SECRET_KEY" "PARLEY_PLATFORM_TOKEN" "PARLEY_LLM_API_KEY" }}
{{- range $name, $value := .Values.env }}
{{- if has $name $owned }}
{{- fail (printf "env.%s: the chart sets %s itself; see values.yaml (secrets, trustedProxies, migration)" $name $name) }}
{{- end }}
{{- end -}}
- name: PARLEY_ADDR
  value: "0.0.0.0:8080"
- name: PARLEY_METRICS_ADDR
  value: {{ printf "0.0.0.0:%d" (int .Values.metrics.port) | quote }}
- name: PARLEY_REDIS_FAIL
  value: {{ .Values.redis.fail | quote }}
- name: PARLEY_MIGRATE
  value: {{ ternary "skip" "auto" .Values.migration.enabled | quote }}
{{- with .Values.trustedProxies }}
- name: PARLEY_TRUSTED_PROXIES
  value: {{ join "," . | quote }}
{{- end }}
{{- range $key := list "PARLEY_DATABASE_URL" "PARLEY_SECRET_KEY" "PARLEY_PLATFORM_TOKEN" "PARLEY_LLM_API_KEY" "PARLEY_REDIS_URL" }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ include "parley.secretName" $ }}
      key: {{ $key }}
      {{- if has $key (list "PARLEY_LLM_API_KEY" "PARLEY_REDIS_URL") }}
      optional: true
      {{- end }}
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
