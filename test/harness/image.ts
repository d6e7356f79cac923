// khook's OCI image, assembled without a container runtime (issue 22 §2), and run the way a
// runtime would run it, for tests and `./dev bench image`:
//
//   layers, bottom to top (what changes least first):
//     base   /etc/passwd and /etc/group (user khook, 65532), /etc/nsswitch.conf, the CA bundle
//            (Debian's ca-certificates, concatenated as update-ca-certificates does), /tmp (1777),
//            /home/khook (owned by khook), empty /proc and /dev for the runtime to mount on
//     libs   the shared libraries the executable needs (its ELF NEEDED entries and interpreter,
//            followed transitively), from Debian's libc6, libstdc++6 and libgcc-s1
//     tools  /usr/local/bin/helm and /usr/local/bin/kustomize, the pinned toolchain builds
//     khook  /usr/local/bin/khook, the single executable
//   no shell, no package manager; entrypoint /usr/local/bin/khook, user 65532:65532.
//
// khook-image (scripts/toolchain/khook-image, on go-containerregistry) turns the directories into
// layers and pushes; it also pulls and unpacks an image into a root filesystem. runInRootfs runs
// the entrypoint there: chroot as the image's user, in a private mount namespace with /proc and
// /dev mounted (what a runtime provides; gone when the process ends, nothing to unmount).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { findOnPath } from "../../provider/tools/locate";
import { seaPath } from "./sea";
import { HELM_VERSION, KUSTOMIZE_VERSION, toolPath } from "./toolchain";
import { repoRoot, run, runOk, toolsDir, type RunResult } from "./util";

export const IMAGE_UID = 65532;
export const IMAGE_HOME = "/home/khook";
const ENTRYPOINT = "/usr/local/bin/khook";
/** Debian packages the image takes files from (whatever version Debian serves; the image's labels record it). */
const DEBS = ["libc6", "libstdc++6", "libgcc-s1", "ca-certificates"];
const LIB_DIRS = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64"];

export interface RegistryLogin {
  username: string;
  password: string;
}

export interface RegistryOptions {
  /** Credentials; none: anonymous. */
  login?: RegistryLogin;
  /** HTTP instead of HTTPS (a loopback test registry). */
  plainHttp?: boolean;
}

export interface BuiltImage {
  reference: string;
  digest: string;
  /** Sum of the compressed layers: what a pull transfers. */
  compressedSize: number;
  /** The unpacked root filesystem. */
  rootfsSize: number;
  layers: { name: string; digest: string; size: number }[];
  debs: string[];
}

export interface ImageConfig {
  Entrypoint?: string[];
  User?: string;
  WorkingDir?: string;
  Env?: string[];
  Labels?: Record<string, string>;
}

/** khook-image's registry arguments and environment (credentials never on argv). */
function registryArgs(opts: RegistryOptions): { args: string[]; env: NodeJS.ProcessEnv } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env["KHOOK_IMAGE_USERNAME"];
  delete env["KHOOK_IMAGE_PASSWORD"];
  if (opts.login !== undefined)
    Object.assign(env, { KHOOK_IMAGE_USERNAME: opts.login.username, KHOOK_IMAGE_PASSWORD: opts.login.password });
  return { args: opts.plainHttp === true ? ["-plain-http"] : [], env };
}

/** The Debian packages, downloaded once into the tools cache (apt-get download: no install, no root needed on the host's state). */
async function debianPackages(): Promise<string[]> {
  const dir = path.join(toolsDir(), "image-debs");
  fs.mkdirSync(dir, { recursive: true });
  const have = (pkg: string) => fs.readdirSync(dir).find((f) => f.startsWith(`${pkg}_`) && f.endsWith(".deb"));
  const missing = DEBS.filter((p) => have(p) === undefined);
  if (missing.length > 0) {
    let r = await run("apt-get", ["download", ...missing], { cwd: dir });
    // A fresh machine has no package lists yet; as root (CI), fetch them once and try again.
    if (r.code !== 0 && process.getuid?.() === 0 && (await run("apt-get", ["update", "-qq"])).code === 0)
      r = await run("apt-get", ["download", ...missing], { cwd: dir });
    if (r.code !== 0)
      throw new Error(
        `apt-get download ${missing.join(" ")} failed (exit ${r.code}); run apt-get update first:\n${r.stderr}`,
      );
  }
  return DEBS.map((p) => path.join(dir, have(p)!));
}

function extractDebs(debs: string[], into: string): void {
  for (const deb of debs) execFileSync("dpkg-deb", ["-x", deb, into]);
}

/** The ELF's NEEDED libraries and interpreter, per readelf. */
function elfNeeds(file: string): { needed: string[]; interpreter: string | undefined } {
  const dynamic = execFileSync("readelf", ["-d", file], { encoding: "utf8" });
  const headers = execFileSync("readelf", ["-l", file], { encoding: "utf8" });
  return {
    needed: [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]!),
    interpreter: /Requesting program interpreter: ([^\]]+)\]/.exec(headers)?.[1],
  };
}

/** Copies the libraries `binary` needs, transitively, from the extracted packages into the layer (each as a regular file at its package path). */
function copyRuntimeLibraries(binary: string, packages: string, layer: string): string[] {
  const copied: string[] = [];
  const place = (rel: string) => {
    const to = path.join(layer, rel);
    if (fs.existsSync(to)) return;
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(fs.realpathSync(path.join(packages, rel)), to);
    fs.chmodSync(to, 0o755);
    copied.push(`/${rel}`);
  };
  const { needed, interpreter } = elfNeeds(binary);
  if (interpreter !== undefined) {
    const rel = interpreter.replace(/^\//, "");
    const target = fs.readlinkSync(path.join(packages, rel), { encoding: "utf8" });
    // The interpreter path (/lib64/ld-linux-x86-64.so.2) is a link into the multiarch directory, as in Debian.
    const real = path.isAbsolute(target) ? target.slice(1) : path.join(path.dirname(rel), target);
    place(real);
    fs.mkdirSync(path.dirname(path.join(layer, rel)), { recursive: true });
    fs.symlinkSync(`/${real}`, path.join(layer, rel));
  }
  const queue = [...needed];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const lib = queue.shift()!;
    if (seen.has(lib)) continue;
    seen.add(lib);
    const rel = LIB_DIRS.map((d) => path.join(d, lib)).find((r) => fs.existsSync(path.join(packages, r)));
    if (rel === undefined)
      throw new Error(
        `image: ${lib}, which ${path.basename(binary)} needs, is in none of the Debian packages ${DEBS.join(", ")}`,
      );
    place(rel);
    queue.push(...elfNeeds(path.join(layer, rel)).needed);
  }
  return copied;
}

function write(file: string, content: string | Buffer, mode = 0o644): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content, { mode });
  fs.chmodSync(file, mode);
}

function baseLayer(dir: string, packages: string): void {
  write(
    path.join(dir, "etc", "passwd"),
    `root:x:0:0:root:/root:/sbin/nologin\nkhook:x:${IMAGE_UID}:${IMAGE_UID}:khook:${IMAGE_HOME}:/sbin/nologin\n`,
  );
  write(path.join(dir, "etc", "group"), `root:x:0:\nkhook:x:${IMAGE_UID}:\n`);
  write(path.join(dir, "etc", "nsswitch.conf"), "passwd: files\ngroup: files\nhosts: files dns\n");
  write(path.join(dir, "etc", "hosts"), "127.0.0.1 localhost\n::1 localhost\n");
  const mozilla = path.join(packages, "usr", "share", "ca-certificates", "mozilla");
  const bundle = fs
    .readdirSync(mozilla)
    .filter((f) => f.endsWith(".crt"))
    .sort()
    .map((f) => fs.readFileSync(path.join(mozilla, f), "utf8").trimEnd() + "\n");
  write(path.join(dir, "etc", "ssl", "certs", "ca-certificates.crt"), bundle.join(""));
  for (const d of ["proc", "dev", "home/khook", "tmp"]) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.chmodSync(path.join(dir, "tmp"), 0o1777);
  fs.chmodSync(path.join(dir, "home", "khook"), 0o755);
}

/** The package's version: the image's version label and default tag. */
export function khookVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(repoRoot(), "package.json"), "utf8")) as { version: string }).version;
}

function treeSize(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += fs.statSync(path.join(e.parentPath, e.name)).size;
  }
  return total;
}

/** Assembles the image from the executable (dist/sea/khook), the pinned tools and the Debian packages, and pushes it as `reference`. */
export async function buildImage(reference: string, opts: RegistryOptions = {}): Promise<BuiltImage> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "khook-image-"));
  try {
    const debs = await debianPackages();
    const packages = path.join(work, "packages");
    extractDebs(debs, packages);
    const layers = {
      base: path.join(work, "base"),
      libs: path.join(work, "libs"),
      tools: path.join(work, "tools"),
      khook: path.join(work, "khook"),
    };
    baseLayer(layers.base, packages);
    const khook = seaPath();
    copyRuntimeLibraries(khook, packages, layers.libs);
    for (const [name, from] of [
      ["helm", toolPath("helm")],
      ["kustomize", toolPath("kustomize")],
    ] as const) {
      write(path.join(layers.tools, "usr", "local", "bin", name), fs.readFileSync(from), 0o755);
    }
    write(path.join(layers.khook, "usr", "local", "bin", "khook"), fs.readFileSync(khook), 0o755);
    const version = khookVersion();
    const debLabel = debs.map((d) => path.basename(d, ".deb")).join(" ");
    const registry = registryArgs(opts);
    const args = [
      "build",
      ...registry.args,
      "-tag",
      reference,
      ...Object.values(layers).flatMap((d) => ["-layer", d]),
      "-chown",
      `home/khook=${IMAGE_UID}:${IMAGE_UID}`,
      "-entrypoint",
      ENTRYPOINT,
      "-user",
      `${IMAGE_UID}:${IMAGE_UID}`,
      "-workdir",
      IMAGE_HOME,
      "-env",
      "PATH=/usr/local/bin",
      "-env",
      `HOME=${IMAGE_HOME}`,
      "-label",
      `org.opencontainers.image.version=${version}`,
      "-label",
      "org.opencontainers.image.title=khook",
      "-label",
      `io.khook.helm.version=v${HELM_VERSION}`,
      "-label",
      `io.khook.kustomize.version=v${KUSTOMIZE_VERSION}`,
      "-label",
      `io.khook.debian.packages=${debLabel}`,
    ];
    const pushed = await runOk(toolPath("khook-image"), args, { env: registry.env });
    const report = JSON.parse(pushed.stdout) as {
      reference: string;
      digest: string;
      compressedSize: number;
      layers: { dir: string; digest: string; size: number }[];
    };
    return {
      reference: report.reference,
      digest: report.digest,
      compressedSize: report.compressedSize,
      rootfsSize: Object.values(layers).reduce((n, d) => n + treeSize(d), 0),
      layers: report.layers.map((l) => ({ name: path.basename(l.dir), digest: l.digest, size: l.size })),
      debs: debs.map((d) => path.basename(d)),
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Pulls `reference` and unpacks its root filesystem into `dir`; returns the digest and the image config. */
export async function exportImage(
  reference: string,
  dir: string,
  opts: RegistryOptions = {},
): Promise<{ digest: string; config: ImageConfig }> {
  fs.mkdirSync(dir, { recursive: true });
  // The root of the filesystem, as a runtime makes it: the image's user must traverse it (mkdtemp makes 0700).
  fs.chmodSync(dir, 0o755);
  const registry = registryArgs(opts);
  const r = await runOk(toolPath("khook-image"), ["export", ...registry.args, "-tag", reference, "-dir", dir], {
    env: registry.env,
  });
  return JSON.parse(r.stdout) as { digest: string; config: ImageConfig };
}

/**
 * Runs the image's entrypoint with `args` in the unpacked root filesystem, as its user, with its
 * environment (plus `env`), in its working directory, the way a runtime would: a private mount
 * namespace mounts /proc and binds /dev into the root (they vanish with the namespace), then
 * unshare --root/--wd/--setuid/--setgid enters it. The host's network (loopback included) is shared.
 */
export function runInRootfs(
  rootfs: string,
  config: ImageConfig,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunResult> {
  const unshare = findOnPath("unshare");
  if (unshare === undefined) throw new Error("image: running the image needs util-linux's unshare on PATH");
  const [uid, gid] = (config.User ?? "0:0").split(":");
  const environment = [...(config.Env ?? []), ...Object.entries(env).map(([k, v]) => `${k}=${v}`)];
  const enter = [
    unshare,
    `--root=${rootfs}`,
    `--wd=${config.WorkingDir ?? "/"}`,
    "--setuid",
    uid ?? "0",
    "--setgid",
    gid ?? uid ?? "0",
    ...(config.Entrypoint ?? []),
    ...args,
  ];
  // The host's sh and env set the namespace up; inside the root nothing but the entrypoint runs, with the image's environment only.
  const script = 'r="$1"; shift; mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" && exec env -i "$@"';
  return run(unshare, [
    "--mount",
    "--propagation",
    "private",
    "sh",
    "-c",
    script,
    "sh",
    rootfs,
    ...environment,
    ...enter,
  ]);
}
