// pulumi-language-dotnet, SDK generation only, for khook's offline toolchain: what
// `pulumi package gen-sdk --language dotnet` asks for, served by ../host with pulumi-dotnet's
// generator (github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3/codegen). The proxy lists
// no version of that module but serves v3.101.0.
//
// Its own module, because that generator does not compile against the CLI's pkg/v3: it needs
// sdk/v3's util/maputil (gone after v3.252.0) and pcl's Resource.DecomposeToken (not in v3.248.0
// or v3.252.0); v3.229.0 is the newest served version that has both.
package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	dotnetgen "github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3/codegen"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"khook.local/toolchain/pulumi-sdkgen-host"
)

func main() {
	host.Serve(func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, _ schema.ReferenceLoader) (map[string][]byte, error) {
		if err := useLocalLogo(pkg); err != nil {
			return nil, err
		}
		return dotnetgen.GeneratePackage("pulumi", pkg, req.GetExtraFiles(), req.GetLocalDependencies())
	})
}

var registerFileProtocol sync.Once

// useLocalLogo points the generator at KHOOK_SDKGEN_LOGO_FILE when it is set. The generator
// downloads the package's logo (the schema's logoUrl, else Pulumi's from raw.githubusercontent.com)
// into the NuGet package, and a machine without the internet cannot fetch it. The URL is only
// fetched, never written into the SDK, so a local file changes nothing else.
func useLocalLogo(pkg *schema.Package) error {
	file := os.Getenv("KHOOK_SDKGEN_LOGO_FILE")
	if file == "" {
		return nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("KHOOK_SDKGEN_LOGO_FILE: %w", err)
	}
	transport, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return fmt.Errorf("KHOOK_SDKGEN_LOGO_FILE: the default HTTP transport cannot read files")
	}
	// RegisterProtocol panics on a second registration, and one host serves many requests.
	registerFileProtocol.Do(func() { transport.RegisterProtocol("file", http.NewFileTransport(http.Dir("/"))) })
	pkg.LogoURL = "file://" + filepath.ToSlash(abs)
	return nil
}
