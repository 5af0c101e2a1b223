//go:build tools

// Package tools pins etcd's server so `go mod tidy` records every module hack/install-kubernetes.sh needs to build
// go.etcd.io/etcd/server/v3 (a main package; etcdmain stands in for it since programs cannot be imported).
package tools

import _ "go.etcd.io/etcd/server/v3/etcdmain"
