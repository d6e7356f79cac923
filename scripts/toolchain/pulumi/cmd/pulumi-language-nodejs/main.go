// pulumi-language-nodejs, minimal edition, written for khook's offline test toolchain.
//
// Upstream's language host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3), which the Go module
// proxy reachable from khook's build machines does not serve. This host implements the part of
// the LanguageRuntime protocol that `pulumi preview|up|destroy|refresh` of a Node.js program
// needs: it runs `node <@pulumi/pulumi/cmd/run> ... <program>` resolved from the program's
// directory, wired to the engine's resource monitor, exactly as upstream does. Plugin discovery
// scans node_modules for package.json files carrying a `pulumi` block ({resource, name, version,
// server}). RunPlugin runs a plugin from source (a directory with PulumiPlugin.yaml, runtime
// nodejs) through `@pulumi/pulumi/cmd/run-plugin`, as upstream does. Everything else (pulumi
// new/convert/pack/policy) is left unimplemented.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Exit code the Node.js SDK uses after it has already printed an actionable message.
const exitAfterUserActionableMessage = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string
	tracing       string
}

func main() {
	h := &host{}
	// The engine passes flags (-tracing, -root, ...) before the positional engine address.
	// Unknown flags are tolerated so that newer engines keep working.
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-tracing="), strings.HasPrefix(a, "--tracing="):
			h.tracing = a[strings.Index(a, "=")+1:]
		case a == "-tracing" || a == "--tracing":
			if i+1 < len(args) {
				h.tracing = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "-"):
			// ignored
		default:
			h.engineAddress = a
		}
	}

	cancel := make(chan bool)
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancel,
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

func (h *host) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

func programDir(info *pulumirpc.ProgramInfo, pwd string) string {
	if info != nil && info.GetProgramDirectory() != "" {
		return info.GetProgramDirectory()
	}
	if pwd != "" {
		return pwd
	}
	wd, _ := os.Getwd()
	return wd
}

type pluginBlock struct {
	Resource bool   `json:"resource"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Server   string `json:"server"`
}

type packageJSON struct {
	Name    string       `json:"name"`
	Version string       `json:"version"`
	Pulumi  *pluginBlock `json:"pulumi"`
}

// requiredPlugins walks node_modules below dir (and its parents' node_modules, like Node's
// resolution does) for packages that declare a Pulumi resource plugin.
func requiredPlugins(dir string) []*pulumirpc.PluginDependency {
	seen := map[string]bool{}
	var out []*pulumirpc.PluginDependency
	var scan func(nm string, depth int)
	scan = func(nm string, depth int) {
		if depth > 4 {
			return
		}
		entries, err := os.ReadDir(nm)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
				continue
			}
			p := filepath.Join(nm, e.Name())
			if strings.HasPrefix(e.Name(), "@") {
				scan(p, depth)
				continue
			}
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(p, "package.json"))
			if err == nil {
				var pj packageJSON
				if json.Unmarshal(b, &pj) == nil && pj.Pulumi != nil && pj.Pulumi.Resource {
					name := pj.Pulumi.Name
					if name == "" {
						name = strings.TrimPrefix(pj.Name, "@pulumi/")
					}
					ver := pj.Pulumi.Version
					if ver == "" {
						ver = pj.Version
					}
					if ver != "" && !strings.HasPrefix(ver, "v") {
						ver = "v" + ver
					}
					key := name + "@" + ver
					if !seen[key] {
						seen[key] = true
						out = append(out, &pulumirpc.PluginDependency{
							Name: name, Kind: "resource", Version: ver, Server: pj.Pulumi.Server,
						})
					}
				}
			}
			scan(filepath.Join(p, "node_modules"), depth+1)
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		scan(filepath.Join(d, "node_modules"), 0)
		if filepath.Dir(d) == d {
			break
		}
	}
	return out
}

func (h *host) GetRequiredPlugins(ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{
		Plugins: requiredPlugins(programDir(req.GetInfo(), req.GetPwd())),
	}, nil
}

func (h *host) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	var pkgs []*pulumirpc.PackageDependency
	for _, p := range requiredPlugins(programDir(req.GetInfo(), "")) {
		pkgs = append(pkgs, &pulumirpc.PackageDependency{
			Name: p.Name, Kind: p.Kind, Version: p.Version, Server: p.Server,
		})
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: pkgs}, nil
}

func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest,
	srv grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse],
) error {
	// khook's test programs resolve @pulumi/pulumi from the repository's node_modules;
	// nothing is installed here (the toolchain is offline).
	return nil
}

func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{
		Executable: node, Version: strings.TrimPrefix(strings.TrimSpace(string(out)), "v"),
	}, nil
}

func (h *host) GetProgramDependencies(ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

// resolveRunScript finds @pulumi/pulumi/cmd/run the way Node would from the program directory.
func resolveRunScript(ctx context.Context, node, dir string) (string, error) {
	if p := os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH"); p != "" && filepath.IsAbs(p) {
		return p, nil
	}
	return resolveSDKScript(ctx, node, dir, "@pulumi/pulumi/cmd/run")
}

// resolveSDKScript finds a directory module of @pulumi/pulumi the way Node would from dir.
func resolveSDKScript(ctx context.Context, node, dir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, node, "-e", "process.stdout.write(require.resolve('"+module+"'))")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New("it looks like the Pulumi SDK has not been installed: " +
			module + " cannot be resolved from " + dir)
	}
	return filepath.Dir(string(out)), nil
}

// streamWriter forwards a plugin's output to the engine as RunPlugin responses.
type streamWriter struct {
	send   func(*pulumirpc.RunPluginResponse) error
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	b := append([]byte(nil), p...)
	var err error
	if w.stderr {
		err = w.send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: b}})
	} else {
		err = w.send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: b}})
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// RunPlugin runs a Node.js plugin from source: `node <@pulumi/pulumi/cmd/run-plugin> <plugin dir>
// <args>` in the engine's working directory with the engine's environment, its output and exit
// code streamed back. The engine reads the plugin's port from the first stdout line.
func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server grpc.ServerStreamingServer[pulumirpc.RunPluginResponse]) error {
	node, err := exec.LookPath("node")
	if err != nil {
		return errors.New("could not find node on the $PATH")
	}
	dir := req.GetInfo().GetProgramDirectory()
	if dir == "" {
		dir = req.GetProgram()
	}
	ctx := server.Context()
	runPath, err := resolveSDKScript(ctx, node, dir, "@pulumi/pulumi/cmd/run-plugin")
	if err != nil {
		return err
	}
	program := dir
	if entry := req.GetInfo().GetEntryPoint(); filepath.IsAbs(entry) {
		program = entry
	} else if entry != "" && entry != "." {
		program = filepath.Join(dir, entry)
	}
	cmd := exec.Command(node, append([]string{runPath, program}, req.GetArgs()...)...)
	cmd.Dir = req.GetPwd()
	cmd.Env = req.GetEnv()
	if len(cmd.Env) == 0 {
		cmd.Env = os.Environ()
	}
	var mu sync.Mutex
	send := func(r *pulumirpc.RunPluginResponse) error {
		mu.Lock()
		defer mu.Unlock()
		return server.Send(r)
	}
	cmd.Stdout = streamWriter{send: send}
	cmd.Stderr = streamWriter{send: send, stderr: true}
	code := 0
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return fmt.Errorf("running the plugin %s: %w", dir, err)
		}
		code = exitErr.ExitCode()
	}
	return send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(code)}})
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: "could not find node on the $PATH"}, nil
	}
	dir := programDir(req.GetInfo(), req.GetPwd())
	runPath, err := resolveRunScript(ctx, node, dir)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	args := []string{runPath}
	add := func(k, v string) {
		if v != "" {
			args = append(args, "--"+k, v)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", h.engineAddress)
	add("organization", req.GetOrganization())
	add("project", req.GetProject())
	add("stack", req.GetStack())
	add("pwd", req.GetPwd())
	if info := req.GetInfo(); info != nil {
		add("root-directory", info.GetRootDirectory())
	}
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	add("query-mode", fmt.Sprint(req.GetQueryMode()))
	add("parallel", fmt.Sprint(req.GetParallel()))
	add("tracing", h.tracing)
	program := req.GetProgram()
	if info := req.GetInfo(); info != nil && info.GetEntryPoint() != "" {
		program = info.GetEntryPoint()
	}
	if program == "" {
		program = "."
	}
	args = append(args, program)
	args = append(args, req.GetArgs()...)

	// Config keys are presented as <namespace>:config:<name>, which every @pulumi/pulumi accepts.
	cfg := map[string]string{}
	for k, v := range req.GetConfig() {
		pk, err := config.ParseKey(k)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "bad config key %q: %v", k, err)
		}
		cfg[pk.Namespace()+":config:"+pk.Name()] = v
	}
	cfgJSON, _ := json.Marshal(cfg)
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretJSON, _ := json.Marshal(secretKeys)

	env := append(os.Environ(),
		"PULUMI_CONFIG="+string(cfgJSON),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secretJSON),
	)
	// As upstream: TypeScript support (ts-node) is on unless Pulumi.yaml sets typescript: false.
	typescript := true
	if opts := req.GetInfo().GetOptions(); opts != nil {
		if v, ok := opts.GetFields()["typescript"]; ok {
			typescript = v.GetBoolValue()
		}
		if v, ok := opts.GetFields()["tsconfig"]; ok && v.GetStringValue() != "" {
			env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+v.GetStringValue())
		}
		if v, ok := opts.GetFields()["nodeargs"]; ok && v.GetStringValue() != "" {
			args = append(strings.Fields(v.GetStringValue()), args...)
		}
	}

	env = append(env, fmt.Sprintf("PULUMI_NODEJS_TYPESCRIPT=%v", typescript))

	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.Env = env
	if err := cmd.Run(); err != nil {
		_ = os.Stdout.Sync()
		_ = os.Stderr.Sync()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == exitAfterUserActionableMessage {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{
				Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
			}, nil
		}
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("Problem executing program (could not run language executor): %v", err),
		}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}
