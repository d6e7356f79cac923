// Wrapper main for etcd: go.etcd.io/etcd/server/v3 has no main package of its own
// (upstream's main lives in the root module, which replaces its submodules with ../ paths).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
