{{/* The release's full name: the release name, or release-chart when the release name lacks it. */}}
{{- define "kubesched.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kubesched.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubesched.labels" -}}
{{ include "kubesched.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kubesched.serviceAccountName" -}}
{{- default (include "kubesched.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* The Lease: the Role grants get/update on this name only. */}}
{{- define "kubesched.leaseName" -}}
{{- default (include "kubesched.fullname" .) .Values.leaderElection.resourceName -}}
{{- end -}}

{{- define "kubesched.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}
