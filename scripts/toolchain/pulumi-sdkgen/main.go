// pulumi-language-go and pulumi-language-python, SDK generation only, for khook's offline
// toolchain.
//
// `pulumi package gen-sdk --language <lang>` asks the language host `pulumi-language-<lang>` to
// generate the SDK (GeneratePackage). The Go module proxy reachable from khook's build machines
// refuses upstream's Go and Python hosts, but serves the code generators they call
// (github.com/pulumi/pulumi/pkg/v3/codegen/go and .../python). This binary serves
// GeneratePackage with them, and nothing else: running Go or Python programs is not implemented.
// It is built once and installed under both names; the name it runs as picks the language.
// (.NET's generator lives in pulumi-dotnet, which the proxy refuses too.)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	if language != "go" && language != "python" {
		fmt.Fprintf(os.Stderr, "fatal: run as pulumi-language-go or pulumi-language-python, not %s\n", os.Args[0])
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
