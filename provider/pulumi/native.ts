/**
 * The native provider's shell: `khook:index:Khook` on @pulumi/pulumi/provider,
 * for Pulumi programs in any language (Python, Go, YAML, C#, and TypeScript
 * through a generated SDK).
 *
 * One engine, two shells: every method here calls the dynamic resource's
 * handlers (handlers.ts) and only translates between the two protocols:
 *  - inputs: a program outside Node cannot read the spec's files into its
 *    inputs, so `check` does here what the TypeScript SDK does at program time
 *    (sdk/index.ts): reads `specFile`, `varFiles` and every local file the spec
 *    references (collectBundle), relative to the program's directory (the
 *    engine starts providers there), and fills in the resource name, project
 *    and stack from the URN. The bundle lands in the checked inputs, so an
 *    edited file shows in `preview`, and destroy/refresh run from state alone;
 *  - secrets: the engine sends Pulumi secrets wrapped; the handlers see plain
 *    values, and what they return is wrapped again where it is secret;
 *  - logs: a native provider's stdout is not shown, so progress and plan
 *    lines go to the engine's log service with the resource's URN (the
 *    dynamic provider prints them; they show under the stack instead);
 *  - stack config: @pulumi/pulumi's provider server answers `Configure`
 *    without passing it on, so the request is read on its way in.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import fs from "node:fs";
import path from "node:path";
import type * as pulumiProvider from "@pulumi/pulumi/provider";
import type * as LoadModule from "../dsl/loader.js";
import { prefixProblems, scanEnvironment } from "../dsl/vars.js";
import { RUN_INPUTS } from "../inputs.js";
import { KHOOK_VERSION } from "../version.js";
import { bundleInput, bundleOptions } from "./bundle.js";
import { cancellation, installCancellation } from "./cancel.js";
import * as handlers from "./handlers.js";
import { khookSchema, KHOOK_TOKEN } from "./native-schema.js";
import { BUNDLE_KEY, UNKNOWN } from "./wire.js";

/** The wire form of a Pulumi secret in a provider's property bags. */
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** Properties that are always secret, whatever the program marked (the dynamic resource's additionalSecretOutputs). */
const ALWAYS_SECRET = ["kubeconfig", "secretVars", "hashKey"];

type Bag = Record<string, unknown>;

function isSecret(v: unknown): v is { value: unknown } {
  return v !== null && typeof v === "object" && (v as Bag)[SIG_KEY] === SECRET_SIG;
}

/** The bag with every secret unwrapped, and the top-level properties that held one. */
export function reveal(bag: Bag | undefined): { plain: Bag; secret: Set<string> } {
  const secret = new Set<string>();
  const strip = (v: unknown, top: string): unknown => {
    if (isSecret(v)) {
      secret.add(top);
      return strip(v.value, top);
    }
    if (Array.isArray(v)) return v.map((x) => strip(x, top));
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v as Bag).map(([k, x]) => [k, strip(x, top)]));
    return v;
  };
  const plain: Bag = {};
  for (const [k, v] of Object.entries(bag ?? {})) plain[k] = strip(v, k);
  return { plain, secret };
}

/** The bag as the engine takes it: plain JSON (no undefined), secret properties wrapped. */
export function conceal(bag: Bag, secret: ReadonlySet<string>): Bag {
  const out: Bag = {};
  for (const [k, v] of Object.entries(JSON.parse(JSON.stringify(bag)) as Bag)) {
    out[k] = (secret.has(k) || ALWAYS_SECRET.includes(k)) && v !== UNKNOWN ? { [SIG_KEY]: SECRET_SIG, value: v } : v;
  }
  return out;
}

/** The parts of `urn:pulumi:<stack>::<project>::<type>::<name>`. */
export function parseUrn(urn: string): { stack: string; project: string; name: string } {
  const parts = urn.split("::");
  return {
    stack: (parts[0] ?? "").replace(/^urn:pulumi:/, ""),
    project: parts[1] ?? "",
    name: parts.slice(3).join("::"),
  };
}

const known = (v: unknown): boolean => v !== undefined && v !== null && v !== UNKNOWN;

function textMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v === null || typeof v !== "object" || Array.isArray(v)) return out;
  for (const [k, x] of Object.entries(v as Bag))
    if (x !== undefined && x !== null && typeof x !== "object") out[k] = String(x);
  return out;
}

/**
 * The program's inputs as the handlers take them (the TypeScript SDK's
 * `khookInputs`, done by the provider): the spec and the files it references
 * read from the program's directory, variables as text, the resource name,
 * project and stack from the URN. Problems reading a file, and the bundle's refusals, are check
 * failures. `secret` names the inputs that must be secret beyond what the program marked (the
 * bundle, when a path is built from a secret variable).
 */
export function programInputs(
  urn: string,
  raw: Bag,
  cwd: string = process.cwd(),
): { inputs: Bag; failures: pulumiProvider.CheckFailure[]; secret: string[] } {
  const failures: pulumiProvider.CheckFailure[] = [];
  const { stack, project, name } = parseUrn(urn);
  const given = (k: string): boolean => raw[k] !== undefined && raw[k] !== null;
  if (given("spec") === given("specFile"))
    failures.push({ property: "spec", reason: "give exactly one of spec and specFile" });
  let specText: unknown = raw.spec;
  let baseDir = path.resolve(cwd, typeof raw.baseDir === "string" ? raw.baseDir : ".");
  if (typeof raw.specFile === "string" && raw.specFile !== UNKNOWN && !given("spec")) {
    const file = path.resolve(cwd, raw.specFile);
    try {
      specText = fs.readFileSync(file, "utf8");
    } catch (e) {
      failures.push({
        property: "specFile",
        reason: `cannot read the spec ${raw.specFile} (from ${cwd}): ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`,
      });
    }
    baseDir = path.dirname(file);
  }
  const varFiles: { file: string; values: Record<string, string> }[] = [];
  if (Array.isArray(raw.varFiles)) {
    const { readVarFile } = require("../dsl/loader.js") as typeof LoadModule;
    raw.varFiles.forEach((f: unknown, i) => {
      if (typeof f !== "string")
        return void failures.push({ property: `varFiles[${i}]`, reason: "each var file must be a path" });
      try {
        varFiles.push({ ...readVarFile(path.resolve(cwd, f)), file: f });
      } catch (e) {
        failures.push({ property: `varFiles[${i}]`, reason: (e as Error).message });
      }
    });
  }
  const prefixes = {
    ...(typeof raw.varPrefix === "string" ? { varPrefix: raw.varPrefix } : {}),
    ...(typeof raw.secretPrefix === "string" ? { secretPrefix: raw.secretPrefix } : {}),
  };
  for (const reason of prefixProblems(prefixes)) failures.push({ property: "varPrefix", reason });
  const { options: bundling, problems: bundlingProblems } = bundleOptions(raw);
  failures.push(...bundlingProblems);
  const fromEnvironment =
    raw.fromEnvironment === true ||
    (raw.fromEnvironment !== false && (prefixes.varPrefix !== undefined || prefixes.secretPrefix !== undefined));
  const env =
    fromEnvironment && failures.length === 0 ? scanEnvironment(process.env, prefixes) : { vars: {}, secrets: {} };
  const vars = textMap(raw.vars);
  const secretVars = { ...env.secrets, ...textMap(raw.secretVars) };
  const inputs: Bag = {
    resourceName: name,
    pulumiProject: project,
    pulumiStack: stack,
    spec: specText,
    ...(typeof raw.specFile === "string" ? { specFile: raw.specFile } : {}),
    vars,
    ...(varFiles.length > 0 ? { varFiles } : {}),
    ...(Object.keys(secretVars).length > 0 ? { secretVars } : {}),
    ...(Object.keys(env.vars).length > 0 ? { envVars: env.vars } : {}),
  };
  // What says where and how a run goes reaches the handlers as the program gave it, as from the TypeScript SDK.
  for (const k of RUN_INPUTS) if (given(k)) inputs[k] = raw[k];
  const secret: string[] = [];
  if (typeof specText === "string" && specText !== UNKNOWN) {
    try {
      const { bundle, secret: bundleIsSecret } = bundleInput(
        specText,
        baseDir,
        { set: Object.entries(vars), varFiles, secretVars, envVars: env.vars },
        bundling,
      );
      inputs[BUNDLE_KEY] = bundle;
      if (bundleIsSecret) secret.push(BUNDLE_KEY);
    } catch (e) {
      failures.push({ property: given("spec") ? "spec" : "specFile", reason: (e as Error).message });
    }
  } else if (known(specText) === false) {
    inputs[BUNDLE_KEY] = { baseDir: ".", files: {}, binaryFiles: {} };
  }
  return { inputs, failures, secret };
}

// ---- the gRPC modules under @pulumi/pulumi's provider server ----

/**
 * What the provider reaches past @pulumi/pulumi/provider's API: the grpc-js copy its server runs
 * on (to read Configure requests) and the engine's log service. From source they are resolved from
 * the installed @pulumi/pulumi (native-main.ts); the single executable's bundle, which has no
 * node_modules to resolve from, passes the copies it bundled (native-sea-entry.ts).
 */
export interface PulumiRpc {
  grpc: {
    credentials: { createInsecure(): unknown };
    Server: {
      prototype: { register: (name: string, handler: (...a: unknown[]) => unknown, ...rest: unknown[]) => boolean };
    };
  };
  engineGrpc: {
    EngineClient: new (addr: string, creds: unknown) => { log(req: unknown, cb: (e: Error | null) => void): void };
  };
  engineProto: {
    LogRequest: new () => {
      setSeverity(s: number): unknown;
      setMessage(m: string): unknown;
      setUrn(u: string): unknown;
      setEphemeral(e: boolean): unknown;
    };
    LogSeverity: { INFO: number; WARNING: number };
  };
}

// ---- logs through the engine, under the resource ----

interface EngineLog {
  send(urn: string, line: string): void;
  flush(): Promise<void>;
}

/** The engine's log service (pulumirpc.Engine/Log), lines in order. */
function engineLog(address: string, { grpc, engineGrpc: { EngineClient }, engineProto }: PulumiRpc): EngineLog {
  const client = new EngineClient(address, grpc.credentials.createInsecure());
  let queue = Promise.resolve();
  return {
    send(urn, line) {
      const req = new engineProto.LogRequest();
      req.setSeverity(
        /^\[[^\]]*\] warning:/.test(line) ? engineProto.LogSeverity.WARNING : engineProto.LogSeverity.INFO,
      );
      req.setMessage(line);
      req.setUrn(urn);
      req.setEphemeral(false);
      queue = queue.then(
        () =>
          new Promise<void>((resolve) =>
            client.log(req, (e) => {
              if (e) process.stderr.write(`${line}\n`);
              resolve();
            }),
          ),
      );
    },
    flush: () => queue,
  };
}

// ---- Configure: the stack config reaches the handlers ----

const CONFIGURE_METHOD = "/pulumirpc.ResourceProvider/Configure";

interface ConfigureRequestMessage {
  getVariablesMap(): { forEach(fn: (value: string, key: string) => void): void };
  getArgs(): { toJavaScript(): Bag } | undefined;
}

/** The `khook:*` settings of a Configure request: stack config (variables) or an explicit provider's inputs (args). */
export function configureSettings(variables: Record<string, string>, args: Bag): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(variables)) {
    const m = /^khook:(?:config:)?(.+)$/.exec(k);
    if (m) out[m[1]!] = v;
  }
  for (const [k, v] of Object.entries(reveal(args).plain))
    if (v !== undefined && v !== null && v !== UNKNOWN) out[k] = typeof v === "string" ? v : JSON.stringify(v);
  return out;
}

/**
 * Reads every Configure request before @pulumi/pulumi's server answers it,
 * through grpc-js's public `Server#register`, which its `addService` calls
 * for each method.
 */
function watchConfigure(grpc: PulumiRpc["grpc"], onRequest: (settings: Record<string, string>) => void): void {
  const proto = grpc.Server.prototype;
  const register = proto.register;
  proto.register = function (this: unknown, name: string, handler: (...a: unknown[]) => unknown, ...rest: unknown[]) {
    const wrapped =
      name === CONFIGURE_METHOD
        ? (call: { request: ConfigureRequestMessage }, ...more: unknown[]) => {
            const variables: Record<string, string> = {};
            call.request.getVariablesMap().forEach((v, k) => (variables[k] = v));
            onRequest(configureSettings(variables, call.request.getArgs()?.toJavaScript() ?? {}));
            return handler(call, ...more);
          }
        : handler;
    return register.call(this, name, wrapped as (...a: unknown[]) => unknown, ...rest);
  };
}

// ---- the provider ----

/** The native provider. `engineAddress` is where its log lines go (the engine passes it as the first argument), through `rpc`; without them, to stderr. */
export function nativeProvider(engineAddress: string | undefined, rpc?: PulumiRpc): pulumiProvider.Provider {
  const current = new AsyncLocalStorage<string>();
  const log = engineAddress === undefined || rpc === undefined ? undefined : engineLog(engineAddress, rpc);
  handlers.setLineSink((line) => {
    const urn = current.getStore();
    if (log !== undefined && urn !== undefined) log.send(urn, line);
    else process.stderr.write(`${line}\n`);
  });
  /** Runs one handler call with its URN for the log lines, and lets them reach the engine before the call returns. */
  const under = async <T>(urn: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await current.run(urn, fn);
    } finally {
      await log?.flush();
    }
  };
  const token = (urn: string): void => {
    const type = urn.split("::")[2] ?? "";
    if (type.split("$").pop() !== KHOOK_TOKEN)
      throw new Error(`khook's provider has no resource type ${type} (it has ${KHOOK_TOKEN})`);
  };
  /** A failed run keeps a partial state: its properties travel in the error, wrapped like outputs. */
  const partial = (e: unknown, secret: ReadonlySet<string>): never => {
    if (e instanceof handlers.PartialFailure) (e as { properties: Bag }).properties = conceal(e.properties, secret);
    throw e;
  };
  return {
    version: KHOOK_VERSION,
    getSchema: () => Promise.resolve(khookSchema()),
    check: (urn, olds: Bag, news: Bag) =>
      under(urn, async () => {
        token(urn);
        const { plain, secret } = reveal(news);
        const { inputs, failures, secret: secretInputs } = programInputs(urn, plain);
        for (const k of secretInputs) secret.add(k);
        if (failures.length > 0) return { inputs: conceal(inputs, secret), failures };
        const result = await handlers.check(reveal(olds).plain, inputs);
        return { inputs: conceal(result.inputs, secret), failures: result.failures };
      }),
    diff: (id, urn, olds: Bag, news: Bag) =>
      under(urn, () => handlers.diff(id, reveal(olds).plain, reveal(news).plain)),
    create: (urn, news: Bag) =>
      under(urn, async () => {
        const { plain, secret } = reveal(news);
        const { id, outs } = await handlers.create(plain).catch((e: unknown) => partial(e, secret));
        return { id, outs: conceal(outs as unknown as Bag, secret) };
      }),
    update: (id, urn, olds: Bag, news: Bag) =>
      under(urn, async () => {
        const { plain, secret } = reveal(news);
        const { outs } = await handlers.update(id, reveal(olds).plain, plain).catch((e: unknown) => partial(e, secret));
        return { outs: conceal(outs as unknown as Bag, secret) };
      }),
    delete: (id, urn, props: Bag) => under(urn, () => handlers.delete(id, reveal(props).plain)),
    read: (id, urn, props?: Bag) =>
      under(urn, async () => {
        const { plain, secret } = reveal(props);
        const result = await handlers.read(id, plain);
        return { id: result.id, props: conceal(result.props, secret) };
      }),
    cancel: () => {
      cancellation.cancel("Cancel");
      return Promise.resolve();
    },
  };
}

/**
 * Serves the provider: the process the engine starts (`pulumi-resource-khook`, or PulumiPlugin.yaml
 * through the Node language host). `server` is @pulumi/pulumi/provider and `rpc` the modules under
 * it: the installed package's, or the single executable's bundled copies.
 */
export async function serve(
  args: string[],
  server: Pick<typeof pulumiProvider, "main">,
  rpc: PulumiRpc,
): Promise<void> {
  const engineAddress = args.find((a) => !a.startsWith("-"));
  watchConfigure(
    rpc.grpc,
    (settings) => void handlers.configure({ config: { get: (key) => settings[key.replace(/^khook:/, "")] } }),
  );
  installCancellation();
  await server.main(nativeProvider(engineAddress, rpc), args);
}
