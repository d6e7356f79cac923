// Package labcmd is what the lab's four cert-manager mains share: a flag set that reads the
// arguments the real chart passes (Go's flag package takes `--name=value` as well as `-v`), klog's
// verbosity, and a context that SIGTERM ends, as the kubelet stops a container.
package labcmd

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/cert-manager/cert-manager/pkg/util"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Flags is a main's flag set. An unknown flag fails with exit code 2 and the usage, so a chart that
// starts passing a flag the lab has not decided about is noticed rather than silently dropped.
type Flags struct {
	*flag.FlagSet
	// Kubeconfig is the file the lab's launcher writes from the pod's ServiceAccount token.
	Kubeconfig string
}

func NewFlags(name string) *Flags {
	f := &Flags{FlagSet: flag.NewFlagSet(name, flag.ExitOnError)}
	f.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig file (empty: the in-cluster config)")
	f.Var(verbosity{}, "v", "klog verbosity; -v alone means 2, as upstream's startupapicheck reads it")
	return f
}

// Ignore accepts flags, with any value, for features the lab's binaries leave out.
func (f *Flags) Ignore(names ...string) {
	for _, n := range names {
		f.Var(ignored{}, n, "accepted and ignored in the lab")
	}
}

// Parse reads args, routes controller-runtime's logging to klog (cert-manager's own loggers are
// klog's already), and returns a context that ends on SIGTERM or SIGINT.
func (f *Flags) Parse(args []string) context.Context {
	_ = f.FlagSet.Parse(args) // ExitOnError: never returns an error
	ctrllog.SetLogger(klog.NewKlogr())
	ctx, _ := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	return ctx
}

// RESTConfig is the client configuration from --kubeconfig, with upstream's user agent
// (`cert-manager-cainjector/v1.21.2 ...`): the cainjector's server-side apply takes its field
// manager from the user agent, and the API server refuses an apply without one.
func (f *Flags) RESTConfig() *rest.Config {
	cfg, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
	if err != nil {
		Fail(err, "cannot load the kubeconfig", "kubeconfig", f.Kubeconfig)
	}
	return util.RestConfigWithUserAgent(cfg, strings.TrimPrefix(f.Name(), "cert-manager-"))
}

// Fail logs why the process cannot go on and exits 1, as upstream's binaries do.
func Fail(err error, msg string, kv ...any) {
	klog.ErrorSDepth(1, err, msg, kv...) // names the main that failed, not this line
	klog.Flush()
	os.Exit(1)
}

// List is a flag that may be repeated and may hold comma-separated values (pflag's StringSlice).
type List []string

func (l *List) String() string { return strings.Join(*l, ",") }
func (l *List) Set(v string) error {
	*l = append(*l, strings.Split(v, ",")...)
	return nil
}

type ignored struct{}

func (ignored) String() string   { return "" }
func (ignored) Set(string) error { return nil }

// verbosity sets klog's -v; as a bool-like flag, `-v` alone is accepted (and means 2).
type verbosity struct{}

func (verbosity) String() string   { return "" }
func (verbosity) IsBoolFlag() bool { return true }
func (verbosity) Set(v string) error {
	if v == "true" {
		v = "2"
	}
	if _, err := strconv.Atoi(v); err != nil {
		return err
	}
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	return fs.Set("v", v)
}
