// pulumi-language-go, pulumi-language-python and pulumi-language-dotnet, SDK generation only, for
// khook's offline toolchain.
//
// `pulumi package gen-sdk --language <lang>` asks the language host `pulumi-language-<lang>` to
// generate the SDK (GeneratePackage). The Go module proxy reachable from khook's build machines
// refuses upstream's Go and Python hosts (and lists no version of .NET's), but serves the code
// generators they call: github.com/pulumi/pulumi/pkg/v3/codegen/go and .../python, and
// github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3/codegen at one exact version. This
// binary serves GeneratePackage with them, and nothing else: running programs is not implemented.
// It is built once and installed under three names; the name it runs as picks the language.
//
// pkg/v3 is pinned to v3.229.0, not the CLI's version: pulumi-dotnet v3.101.0's generator needs
// both sdk/v3's util/maputil (gone after v3.252.0) and pcl's Resource.DecomposeToken (not in
// v3.248.0 or v3.252.0); v3.229.0 is the newest served version that has both.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	dotnetgen "github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3/codegen"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	pygen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	language string
}

func main() {
	language := strings.TrimPrefix(filepath.Base(os.Args[0]), "pulumi-language-")
	if language != "go" && language != "python" && language != "dotnet" {
		fmt.Fprintf(os.Stderr, "fatal: run as pulumi-language-go, pulumi-language-python or pulumi-language-dotnet, not %s\n", os.Args[0])
		os.Exit(1)
	}
	h := &host{language: language}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fatal: could not start language host RPC server: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "fatal: language host RPC stopped serving: %v\n", err)
		os.Exit(1)
	}
}

func (h *host) Handshake(context.Context, *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

func (h *host) GeneratePackage(ctx context.Context, req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, fmt.Errorf("the schema is not valid JSON: %w", err)
	}
	loader, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	var files map[string][]byte
	switch h.language {
	case "go":
		files, err = gogen.GeneratePackage("pulumi", pkg, req.GetLocalDependencies())
	case "python":
		files, err = pygen.GeneratePackage("pulumi", pkg, req.GetExtraFiles(), loader)
	case "dotnet":
		if err := useLocalLogo(pkg); err != nil {
			return nil, err
		}
		files, err = dotnetgen.GeneratePackage("pulumi", pkg, req.GetExtraFiles(), req.GetLocalDependencies())
	}
	if err != nil {
		return nil, err
	}
	for name, content := range files {
		path := filepath.Join(req.GetDirectory(), name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return nil, err
		}
	}
	return &pulumirpc.GeneratePackageResponse{}, nil
}

var registerFileProtocol sync.Once

// useLocalLogo points the .NET generator at KHOOK_SDKGEN_LOGO_FILE when it is set. The generator
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
