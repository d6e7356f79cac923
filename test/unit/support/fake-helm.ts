/** A helm executable that records every call, for unit tests of the helm executor (no cluster, no chart server). */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * A helm that logs one JSON line per call: argv, HELM_* dirs, and copies (with
 * modes) of the values file, the repositories config and the registry config.
 * What it answers is chosen by `opts`: `helm version`, `helm history -o json`
 * (empty: the release is not found), `helm list -o json`, and the manifest
 * `helm get manifest` prints; `historyAfterRecovery` is the history once a `helm rollback` or
 * `helm uninstall` ran.
 */
export function fakeHelm(
  opts: { version?: string; history?: string; list?: string; manifest?: string; historyAfterRecovery?: string } = {},
): { bin: string; calls: () => FakeCall[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-fakehelm-"));
  const log = path.join(dir, "calls.jsonl");
  const bin = path.join(dir, "helm");
  const history = opts.history ?? "";
  fs.writeFileSync(path.join(dir, "history.json"), history);
  fs.writeFileSync(path.join(dir, "list.json"), opts.list ?? "[]");
  const script = `#!/usr/bin/env node
const fs = require("fs");
const argv = process.argv.slice(2);
const stdin = (() => { try { return fs.readFileSync(0, "utf8"); } catch { return ""; } })();
const fileMode = (f) => { try { return (fs.statSync(f).mode & 0o777).toString(8); } catch { return undefined; } };
const fileInfo = (f) => { try { return { content: fs.readFileSync(f, "utf8"), mode: (fs.statSync(f).mode & 0o777).toString(8) }; } catch { return undefined; } };
const at = argv.indexOf("--values");
const kc = argv.indexOf("--kubeconfig");
const call = {
  argv, stdin,
  env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("HELM_"))),
  values: at === -1 ? undefined : fileInfo(argv[at + 1]),
  kubeconfig: kc === -1 ? undefined : fileInfo(argv[kc + 1]),
  repos: process.env.HELM_REPOSITORY_CONFIG ? fileInfo(process.env.HELM_REPOSITORY_CONFIG) : undefined,
  registry: process.env.HELM_REGISTRY_CONFIG ? fileInfo(process.env.HELM_REGISTRY_CONFIG) : undefined,
  sessionMode: process.env.HELM_CONFIG_HOME ? fileMode(require("path").dirname(process.env.HELM_CONFIG_HOME)) : undefined,
};
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(call) + "\\n");
const cmd = argv[0];
if (cmd === "version") { console.log(${JSON.stringify(opts.version ?? "v3.22.0+gfake")}); process.exit(0); }
if (cmd === "history") {
  const h = fs.readFileSync(${JSON.stringify(path.join(dir, "history.json"))}, "utf8");
  if (h === "") { console.error("Error: release: not found"); process.exit(1); }
  console.log(h); process.exit(0);
}
if (cmd === "list") { console.log(fs.readFileSync(${JSON.stringify(path.join(dir, "list.json"))}, "utf8")); process.exit(0); }
if (cmd === "get" && argv[1] === "values") { console.log("null"); process.exit(0); }
if (cmd === "get" && argv[1] === "manifest") { process.stdout.write(${JSON.stringify(opts.manifest ?? "")}); process.exit(0); }
if (cmd === "repo") { process.exit(0); }
if (cmd === "show") { console.log("apiVersion: v2\\nname: demo\\nversion: 1.2.3\\n"); process.exit(0); }
if (cmd === "install" || cmd === "upgrade") {
  console.log(JSON.stringify({ version: 1, info: { status: "deployed" }, chart: { metadata: { name: "demo", version: "1.2.3" } }, manifest: "", config: {} }));
  process.exit(0);
}
const recovered = ${JSON.stringify(opts.historyAfterRecovery ?? null)};
if (recovered !== null && (cmd === "rollback" || cmd === "uninstall")) fs.writeFileSync(${JSON.stringify(path.join(dir, "history.json"))}, recovered);
if (cmd === "rollback") { console.log("Rollback was a success! Happy Helming!"); process.exit(0); }
if (cmd === "uninstall") { console.log("release uninstalled"); process.exit(0); }
console.error("fake helm: unexpected " + argv.join(" ")); process.exit(3);
`;
  fs.writeFileSync(bin, script, { mode: 0o755 });
  return {
    bin,
    calls: () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as FakeCall)
        : [],
  };
}

export interface FakeCall {
  argv: string[];
  stdin: string;
  env: Record<string, string>;
  values?: { content: string; mode: string };
  kubeconfig?: { content: string; mode: string };
  repos?: { content: string; mode: string };
  registry?: { content: string; mode: string };
  sessionMode?: string;
}
