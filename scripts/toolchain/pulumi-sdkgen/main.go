// pulumi-language-go and pulumi-language-python, SDK generation only, for khook's offline
// toolchain.
//
// `pulumi package gen-sdk --language <lang>` asks the language host `pulumi-language-<lang>` to
// generate the SDK (GeneratePackage). The Go module proxy reachable from khook's build machines
// refuses upstream's Go and Python hosts, but serves the code generators they call
// (github.com/pulumi/pulumi/pkg/v3/codegen/go and .../python), at the CLI's version. This binary
// serves GeneratePackage with them (./host), and nothing else. It is built once and installed
// under both names; the name it runs as picks the language. .NET's generator is ./dotnet.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	pygen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"khook.local/toolchain/pulumi-sdkgen-host"
)

func main() {
	switch language := strings.TrimPrefix(filepath.Base(os.Args[0]), "pulumi-language-"); language {
	case "go":
		host.Serve(func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, _ schema.ReferenceLoader) (map[string][]byte, error) {
			return gogen.GeneratePackage("pulumi", pkg, req.GetLocalDependencies())
		})
	case "python":
		host.Serve(func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error) {
			return pygen.GeneratePackage("pulumi", pkg, req.GetExtraFiles(), loader)
		})
	default:
		fmt.Fprintf(os.Stderr, "fatal: run as pulumi-language-go or pulumi-language-python, not %s\n", os.Args[0])
		os.Exit(1)
	}
}
