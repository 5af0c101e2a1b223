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

{{- /* The `helm test` Pods: a name label of their own, so neither the Deployment's selector nor the Service's matches them. */}}
{{- define "remram-operator.testLabels" -}}
app.kubernetes.io/name: remram-operator-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: chart-test
app.kubernetes.io/part-of: remram
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "remram-operator.testImage" -}}
{{- $image := .Values.tests.image -}}
{{ $image.repository | default .Values.image.repository }}:{{ $image.tag | default .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- /* Restricted Pod Security for the test Pods; the image's node runs as any uid. */}}
{{- define "remram-operator.testPodSecurity" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "remram-operator.testContainerSecurity" -}}
allowPrivilegeEscalation: false
capabilities: { drop: [ALL] }
readOnlyRootFilesystem: true
runAsNonRoot: true
{{- end }}
