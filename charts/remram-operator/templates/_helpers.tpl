{{- define "remram-operator.name" -}}remram-operator{{- end }}

{{- define "remram-operator.serviceAccountName" -}}remram-operator{{- end }}

{{- define "remram-operator.labels" -}}
app.kubernetes.io/name: remram-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: remram
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "remram-operator.selectorLabels" -}}
app.kubernetes.io/name: remram-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
