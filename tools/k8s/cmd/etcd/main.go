// Command etcd is the etcd server, built from the pinned go.etcd.io/etcd/server/v3
// module. It is identical to upstream's root main.go (etcdmain.Main).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
