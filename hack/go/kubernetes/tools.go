//go:build tools

// Package tools pins the command packages built by hack/install-kubernetes.sh (control plane, kubectl) and
// hack/install-node-parts.sh (kubelet, kube-proxy) so `go mod tidy` keeps every module
// they need in go.mod/go.sum (main packages cannot be imported, so their app packages stand in for them).
package tools

import (
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
