/**
 * The native provider's schema as the pulumi CLI sees it (`pulumi package
 * get-schema pulumi-resource-khook`), and the SDKs `pulumi package gen-sdk`
 * makes from it, checked as far as this machine can: the Go SDK builds
 * against github.com/pulumi/pulumi/sdk/v3 (the toolchain's pinned version),
 * and the Python SDK installs and imports with pulumi 3.272.0 (from PyPI, into
 * a cached virtualenv). The .NET SDK is generated and read, not built: this
 * machine has no .NET SDK and cannot reach NuGet. The generators are the
 * toolchain's pulumi-sdkgen (pkg/v3's codegen and pulumi-dotnet's).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { test } from "node:test";
import { khookSchema } from "../../provider/pulumi/native-schema.js";
import { PULUMI_VERSION } from "../harness/toolchain.js";
import { cacheDir } from "../harness/util.js";
import { pulumiTools } from "./support/pulumi-env.js";
import { khookRoot } from "./support/pulumi-project.js";

const run = promisify(execFile);
const PYTHON_PULUMI = "3.272.0";

/** A virtualenv with pulumi (Python) installed once and reused; built next to the toolchain cache. */
async function pythonWithPulumi(): Promise<string> {
  const dir = path.join(cacheDir(), "python", `pulumi-${PYTHON_PULUMI}`);
  const python = path.join(dir, "bin", "python");
  if (fs.existsSync(path.join(dir, ".complete"))) return python;
  fs.rmSync(dir, { recursive: true, force: true });
  await run("python3", ["-m", "venv", dir]);
  await run(path.join(dir, "bin", "python"), ["-m", "pip", "install", "--quiet", `pulumi==${PYTHON_PULUMI}`, "wheel"], {
    timeout: 600_000,
  });
  fs.writeFileSync(path.join(dir, ".complete"), "");
  return python;
}

test(
  "get-schema prints the native provider's schema; gen-sdk's Go SDK builds against sdk/v3, its Python SDK imports with pulumi 3.272.0, its .NET SDK declares the inputs with secrets as secrets",
  { timeout: 1_200_000 },
  async () => {
    const tools = pulumiTools();
    const env = {
      ...tools.env,
      PULUMI_HOME: fs.mkdtempSync(path.join(os.tmpdir(), "khook-gen-sdk-home-")),
      PULUMI_SKIP_UPDATE_CHECK: "true",
    };
    const launcher = path.join(khookRoot(), "bin", "pulumi-resource-khook");
    const { stdout } = await run(tools.pulumi, ["package", "get-schema", launcher], { env, maxBuffer: 1 << 24 });
    const schema = JSON.parse(stdout) as { name: string; resources: Record<string, unknown> };
    assert.deepEqual(schema, JSON.parse(khookSchema()), "the CLI gets exactly the schema the provider declares");

    const out = fs.mkdtempSync(path.join(os.tmpdir(), "khook-gen-sdk-"));
    // .NET's generator downloads the package logo (raw.githubusercontent.com here); it takes a local file instead.
    const logo = path.join(out, "logo-input.png");
    fs.writeFileSync(logo, "a logo\n");
    for (const language of ["go", "python", "dotnet"]) {
      await run(tools.pulumi, ["package", "gen-sdk", launcher, "--language", language, "--out", out], {
        env: { ...env, KHOOK_SDKGEN_LOGO_FILE: logo },
        maxBuffer: 1 << 24,
      });
    }

    // Go: builds against sdk/v3 at the toolchain's version (go.sum from the toolchain's wrapper; the module cache it filled).
    const goDir = path.join(out, "go");
    fs.writeFileSync(
      path.join(goDir, "go.mod"),
      `module github.com/khook/pulumi-khook/sdk/go\n\ngo 1.25\n\nrequire github.com/pulumi/pulumi/sdk/v3 v${PULUMI_VERSION}\n`,
    );
    fs.copyFileSync(path.join(khookRoot(), "scripts", "toolchain", "pulumi", "go.sum"), path.join(goDir, "go.sum"));
    const goEnv = { ...process.env, CGO_ENABLED: "0", GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod -trimpath" };
    await run("go", ["mod", "tidy"], { cwd: goDir, env: goEnv, timeout: 600_000 });
    await run("go", ["build", "./..."], { cwd: goDir, env: goEnv, timeout: 900_000 });
    const goSource = fs.readFileSync(path.join(goDir, "khook", "khook.go"), "utf8");
    assert.match(goSource, /func NewKhook\(ctx \*pulumi\.Context/);
    assert.match(goSource, /SecretVars/);

    // Python: installs (pyproject.toml) and imports with pulumi installed, and Khook takes the inputs.
    const python = await pythonWithPulumi();
    const site = path.join(out, "site");
    await run(
      python,
      [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--target",
        site,
        path.join(out, "python"),
      ],
      { timeout: 300_000 },
    );
    const probe = `import pulumi_khook, inspect\nsig = inspect.signature(pulumi_khook.Khook._internal_init)\nprint(" ".join(sorted(sig.parameters)))\n`;
    const py = await run(python, ["-c", probe], { cwd: out, env: { ...process.env, PYTHONPATH: site } });
    for (const input of ["spec_file", "vars", "secret_vars", "kubeconfig", "var_files", "preview_mode"])
      assert.ok(py.stdout.split(/\s+/).includes(input), `python Khook takes ${input}: ${py.stdout}`);

    // .NET: the resource and its args, with the schema's secret inputs wrapped as secrets and its secret outputs declared.
    const csharp = fs.readFileSync(path.join(out, "dotnet", "Khook.cs"), "utf8");
    assert.match(csharp, /public partial class Khook : global::Pulumi\.CustomResource/);
    assert.match(csharp, /public sealed class KhookArgs : global::Pulumi\.ResourceArgs/);
    for (const input of ["SpecFile", "Vars", "VarFiles", "PreviewMode"])
      assert.match(
        csharp,
        new RegExp(`public Input(?:Map|List)?<[^>]+>\\?? ${input}\\b`),
        `C# KhookArgs takes ${input}`,
      );
    for (const secret of ["Kubeconfig", "SecretVars"]) {
      assert.match(
        csharp,
        new RegExp(`public Input(?:Map)?<[^>]+>\\?? ${secret}\\s*\\{[\\s\\S]*?Output\\.CreateSecret`),
        `C# wraps ${secret} as a secret`,
      );
    }
    assert.match(csharp, /AdditionalSecretOutputs =\s*\{[^}]*"secretVars"/, "secret outputs are declared");
    assert.equal(
      fs.readFileSync(path.join(out, "dotnet", "logo.png"), "utf8"),
      "a logo\n",
      "the logo came from the local file, not the internet",
    );
    fs.rmSync(out, { recursive: true, force: true });
  },
);
