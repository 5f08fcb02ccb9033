// informer-bench: a client-go pods informer (SharedInformerFactory, one
// namespace, rate limits off), measured the way bench_kube_informer measures
// gr_kube's: sync wall/CPU and peak RSS until HasSynced, then the CPU to
// observe N updates. Prints `name: value unit` lines.
//
//	informer-bench -kubeconfig F -namespace NS -pods N [-json]
//
// After "synced" it prints "ready" and waits for N update events (the
// driver makes them), then prints the update figures and exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func maxRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss // KiB on Linux
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file")
	ns := flag.String("namespace", "default", "namespace to watch")
	pods := flag.Int("pods", 10000, "pods expected in the cache, and updates to observe")
	forceJSON := flag.Bool("json", false, "ask for JSON instead of client-go's default (protobuf)")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "informer-bench:", err)
		os.Exit(2)
	}
	cfg.QPS = -1 // rate limits off, as on the gr_kube side
	cfg.Burst = 0
	if *forceJSON {
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "informer-bench:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	var adds, updates atomic.Int64
	done := make(chan struct{})
	want := int64(*pods)

	cpu0, t0 := cpu(), time.Now()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*ns))
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { adds.Add(1) },
		UpdateFunc: func(oldObj, newObj interface{}) {
			o, n := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
			if o.ResourceVersion == n.ResourceVersion {
				return // a resync, not an update
			}
			if updates.Add(1) == want {
				close(done)
			}
		},
	})
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		fmt.Fprintln(os.Stderr, "informer-bench: did not sync")
		os.Exit(1)
	}
	syncWall, syncCPU, rss := time.Since(t0), cpu()-cpu0, maxRSS()
	n := len(inf.GetStore().List())
	fmt.Printf("client: client-go %s\n", map[bool]string{true: "json", false: "default"}[*forceJSON])
	fmt.Printf("cached: %d pods\n", n)
	fmt.Printf("sync_wall: %.3f s\n", syncWall.Seconds())
	fmt.Printf("sync_cpu: %.3f s\n", syncCPU.Seconds())
	fmt.Printf("sync_peak_rss: %.1f MB\n", float64(rss)/1024)
	fmt.Println("ready")
	cpu1 := cpu()
	select {
	case <-done:
	case <-ctx.Done():
		fmt.Fprintf(os.Stderr, "informer-bench: saw %d of %d updates\n", updates.Load(), want)
		os.Exit(1)
	}
	fmt.Printf("update_cpu: %.3f s\n", (cpu()-cpu1).Seconds())
	fmt.Printf("peak_rss: %.1f MB\n", float64(maxRSS())/1024)
}
