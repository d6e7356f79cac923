/**
 * A Pulumi program that bootstraps a cluster with a khook spec.
 *
 * In a project that installs khook from npm this is simply:
 *
 *   import { Khook } from "khook";
 *   const boot = new Khook("bootstrap", { specFile: "./bootstrap.khook.yaml", kubeconfig });
 *
 * Stack config (all optional):
 *   khook-demo:specFile        the spec (default: examples/demo.khook.yaml of this repository)
 *   khook-demo:kubeconfigFile  a kubeconfig whose content becomes the (secret) kubeconfig input;
 *                              without it: stack config khook:kubeconfig, else the ambient kubeconfig
 *   khook-demo:context         the kubeconfig context
 *   khook-demo:vars            a JSON object of variables
 *
 * `npm run demo` (examples/pulumi/demo.ts) sets it all up against the local cluster.
 */
import fs from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
// This program lives inside the khook package, so it imports the SDK by path; the
// dynamic provider still resolves khook by package name from the program's directory.
import { Khook, type KhookStep } from "../../sdk/index.js";

const REPO = path.resolve(__dirname, "..", "..", "..");

/**
 * The dynamic provider runs `require("khook/provider/pulumi/handlers")` from the
 * program's directory, through node_modules only (the serialized provider is not
 * part of any package, so Node's self-reference does not apply). A project that
 * installs khook has it in node_modules; this in-repository example links it
 * into the build output the first time it runs.
 */
function ensureKhookResolvable(): void {
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "node_modules", "khook", "package.json"))) return;
    if (path.dirname(dir) === dir) break;
  }
  const link = path.join(process.cwd(), "node_modules", "khook");
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.rmSync(link, { force: true, recursive: true });
  fs.symlinkSync(REPO, link, "dir");
}

ensureKhookResolvable();

const config = new pulumi.Config();
const specFile = config.get("specFile") ?? path.join(REPO, "examples", "demo.khook.yaml");
const kubeconfigFile = config.get("kubeconfigFile");
const vars = config.getObject<Record<string, string>>("vars");
const context = config.get("context");

const bootstrap = new Khook("bootstrap", {
  // Shown in messages as written: keep it relative to the program when it can be.
  specFile: path.relative(process.cwd(), specFile) || specFile,
  ...(vars !== undefined ? { vars } : {}),
  ...(kubeconfigFile !== undefined ? { kubeconfig: fs.readFileSync(kubeconfigFile, "utf8") } : {}),
  ...(context !== undefined ? { context } : {}),
  timeout: "10m",
});

export const steps: pulumi.Output<KhookStep[]> = bootstrap.steps;
export const runStatus = bootstrap.runStatus;
export const record = pulumi.interpolate`${bootstrap.recordNamespace}/${bootstrap.recordName}`;
export const engineVersion = bootstrap.engineVersion;
export const plan = bootstrap.plan;
