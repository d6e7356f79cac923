/**
 * Chart sources: the shape of `chart:` implies where the chart comes from.
 * Pure: classification, the spec's rules (the loader checks them: dsl/rules.ts), a
 * credential-free description, and the facts helm needs of a source: how to name the chart
 * on its command line, and which chart and version the source pins without asking helm.
 */

/** Basic-auth credentials of a chart repository or registry (steps/helm/definition.ts `auth:`). */
export interface BasicAuth {
  username: string;
  password: string;
}

/** The fields of a `helm:` block that say where the chart comes from. */
export interface ChartFields {
  chart: string;
  repo?: string | undefined;
  version?: string | undefined;
  auth?: BasicAuth | undefined;
}

export type ChartSource =
  | { form: "repo"; name: string; version: string | undefined; repoUrl: string; credentials: BasicAuth | undefined }
  | {
      form: "oci";
      reference: string;
      tag: string | undefined;
      digest: string | undefined;
      version: string | undefined;
      credentials: BasicAuth | undefined;
    }
  | { form: "local"; path: string; packaged: boolean };

export interface ChartProblem {
  /** Field of the helm block the problem is about. */
  field: "chart" | "repo" | "version" | "auth";
  message: string;
}

export function isLocalPath(p: string): boolean {
  return p.startsWith("./") || p.startsWith("../") || p.startsWith("/");
}

/** Splits URL userinfo off; `user` and `password` are decoded. */
export function splitUserinfo(url: string): {
  url: string;
  user: string | undefined;
  password: string | undefined;
  hasUserinfo: boolean;
} {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/@]*)@(.*)$/.exec(url);
  if (m === null) return { url, user: undefined, password: undefined, hasUserinfo: false };
  const info = m[2]!;
  const colon = info.indexOf(":");
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return {
    url: `${m[1]}${m[3]}`,
    user: colon === -1 ? decode(info) : decode(info.slice(0, colon)),
    password: colon === -1 ? undefined : decode(info.slice(colon + 1)),
    hasUserinfo: true,
  };
}

/** Classifies `chart:` and checks every chart-source rule of the spec. */
export function classifyChart(helm: ChartFields): { source: ChartSource | undefined; problems: ChartProblem[] } {
  const problems: ChartProblem[] = [];
  const chart = helm.chart;

  if (isLocalPath(chart)) {
    if (helm.repo !== undefined)
      problems.push({
        field: "repo",
        message: "a local chart path forbids repo: (the path already says where the chart is)",
      });
    if (helm.version !== undefined)
      problems.push({
        field: "version",
        message: "a local chart path forbids version: (the path already pins the chart)",
      });
    if (helm.auth !== undefined)
      problems.push({ field: "auth", message: "a local chart path forbids auth: (nothing is fetched)" });
    return { source: { form: "local", path: chart, packaged: /\.tgz$/.test(chart) }, problems };
  }

  if (chart.startsWith("oci://")) {
    if (helm.repo !== undefined)
      problems.push({
        field: "repo",
        message: "an oci:// chart forbids repo: (the reference already names the registry)",
      });
    const info = splitUserinfo(chart);
    const credentials = checkCredentials(info, helm.auth, "chart", problems);
    let rest = info.url.slice("oci://".length);
    let digest: string | undefined;
    const at = rest.indexOf("@");
    if (at !== -1) {
      digest = rest.slice(at + 1);
      rest = rest.slice(0, at);
    }
    let tag: string | undefined;
    const lastSlash = rest.lastIndexOf("/");
    const colon = rest.indexOf(":", lastSlash + 1);
    if (colon !== -1 && lastSlash !== -1) {
      tag = rest.slice(colon + 1);
      rest = rest.slice(0, colon);
    }
    if (lastSlash === -1 || rest.slice(lastSlash + 1) === "") {
      problems.push({
        field: "chart",
        message: `"${describeChartText(chart)}" is not an OCI chart reference; use oci://<registry>/<path>/<chart>[:tag|@digest]`,
      });
    }
    if (tag?.includes(":") === true) {
      problems.push({
        field: "chart",
        message: `"${describeChartText(chart)}" has two tags (two ':' after the chart name); write one :<tag> (or @sha256:<digest>)`,
      });
    }
    if (tag === "") {
      problems.push({
        field: "chart",
        message: `"${describeChartText(chart)}" ends with ':' but has no tag; write :<tag> or @sha256:<digest>, or drop the ':' and pin version:`,
      });
    }
    if ((tag !== undefined || digest !== undefined) && helm.version !== undefined) {
      problems.push({
        field: "version",
        message: `the oci:// reference already pins ${tag !== undefined ? `tag ${tag}` : "a digest"}; remove version: or the inline ${tag !== undefined ? ":tag" : "@digest"}`,
      });
    }
    if (digest !== undefined && !/^sha256:[a-f0-9]{64}$/.test(digest)) {
      problems.push({ field: "chart", message: `"@${digest}" is not a digest; use @sha256:<64 hex digits>` });
    }
    return {
      source: { form: "oci", reference: `oci://${rest}`, tag, digest, version: helm.version, credentials },
      problems,
    };
  }

  // A bare name, optionally with inline `:version`.
  const colon = chart.indexOf(":");
  const name = colon === -1 ? chart : chart.slice(0, colon);
  const inlineVersion = colon === -1 ? undefined : chart.slice(colon + 1);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(chart)) {
    problems.push({
      field: "chart",
      message: `"${describeChartText(chart)}" is a URL; a chart is a bare name with repo:, an oci:// reference, or a local path (./, ../ or /)`,
    });
  } else if (name.includes("/")) {
    problems.push({
      field: "chart",
      message: `"${name}" looks like <repo-name>/<chart>; khook has no repository names: write chart: ${name.slice(name.lastIndexOf("/") + 1)} and repo: <repository URL>, or a local path starting with ./`,
    });
  } else if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
    problems.push({ field: "chart", message: `"${name}" is not a chart name` });
  }
  if (inlineVersion !== undefined && inlineVersion === "")
    problems.push({ field: "chart", message: `"${chart}" ends with ':' but has no version` });
  if (inlineVersion?.includes(":") === true)
    problems.push({
      field: "chart",
      message: `"${describeChartText(chart)}" has two version separators; write <name>:<version> with one ':' (or version:)`,
    });
  if (inlineVersion !== undefined && helm.version !== undefined) {
    problems.push({
      field: "version",
      message: `the version is given twice: inline (${chart}) and version: ${helm.version}; keep one`,
    });
  }
  if (helm.repo === undefined) {
    problems.push({
      field: "repo",
      message: `the bare chart name "${name}" needs repo: <HTTP(S) chart repository URL>`,
    });
    return { source: undefined, problems };
  }
  const info = splitUserinfo(helm.repo);
  if (!/^https?:\/\/[^/]/.test(info.url)) {
    problems.push({
      field: "repo",
      message: `repo: must be an http:// or https:// chart repository URL, got "${describeChartText(helm.repo)}"`,
    });
  }
  const credentials = checkCredentials(info, helm.auth, "repo", problems);
  return {
    source: { form: "repo", name, version: helm.version ?? inlineVersion, repoUrl: info.url, credentials },
    problems,
  };
}

function checkCredentials(
  info: ReturnType<typeof splitUserinfo>,
  auth: BasicAuth | undefined,
  field: "chart" | "repo",
  problems: ChartProblem[],
): BasicAuth | undefined {
  if (!info.hasUserinfo) return auth;
  if (auth !== undefined) {
    problems.push({
      field: "auth",
      message: `credentials are given twice: in the ${field} URL and in auth:; use one (auth: is preferred for tokens)`,
    });
  }
  if (info.user === undefined || info.user === "" || info.password === undefined || info.password === "") {
    problems.push({
      field,
      message: `inline credentials in the ${field} URL must be a full <username>:<password>@ pair (URL-encode special characters with \${VAR|urlquery})`,
    });
    return auth;
  }
  return { username: info.user, password: info.password };
}

/** The chart text without any userinfo; safe to print. */
export function describeChartText(text: string): string {
  return splitUserinfo(text).url;
}

/** `cilium@1.18.4 from https://helm.cilium.io/` — never includes credentials. */
export function describeChartSource(source: ChartSource): string {
  switch (source.form) {
    case "repo":
      return `${source.name}${source.version ? `@${source.version}` : " (latest)"} from ${source.repoUrl}`;
    case "oci":
      return `${source.reference}${source.digest ? `@${source.digest}` : source.tag ? `:${source.tag}` : source.version ? `@${source.version}` : " (latest)"}`;
    case "local":
      return `local ${source.packaged ? "package" : "chart"} ${source.path}`;
  }
}

// ------------------------------------------------------------------ facts for helm

/** A chart's name and version as the source pins them. */
export interface PinnedChart {
  name: string;
  version: string;
}

/** A version helm takes as is: not a range, not "latest". */
const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

function ociChartName(reference: string): string {
  return reference.slice(reference.lastIndexOf("/") + 1);
}

/** OCI tags cannot hold '+', so helm pushes `1.0.0+x` as tag `1.0.0_x`. */
export function tagToVersion(tag: string): string {
  return tag.replace(/_/g, "+");
}

/** `host[:port]` of an `oci://` reference: where its credentials apply. */
export function ociHost(reference: string): string {
  const rest = reference.slice("oci://".length);
  const slash = rest.indexOf("/");
  return slash === -1 ? rest : rest.slice(0, slash);
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\./.test(h);
}

/**
 * The chart a repository or OCI source names with an exact version, known without asking helm;
 * undefined when helm must resolve it ("latest", a range, a digest) or it is a local chart
 * (whose Chart.yaml says).
 */
export function pinnedChart(source: ChartSource): PinnedChart | undefined {
  if (source.form === "repo" && source.version !== undefined && EXACT_VERSION.test(source.version))
    return { name: source.name, version: source.version };
  if (source.form === "oci" && source.digest === undefined) {
    const v = source.tag !== undefined ? tagToVersion(source.tag) : source.version;
    if (v !== undefined && EXACT_VERSION.test(v)) return { name: ociChartName(source.reference), version: v };
  }
  return undefined;
}

/** How helm finds a chart: the argument plus flags (`--repo`, `--version`, `--plain-http`). */
export interface ChartRef {
  chart: string;
  flags: string[];
}

/**
 * The chart argument and flags of a remote source. `privateRepo` is the name of the session's
 * private repository entry holding the credentials of a repository source that has them;
 * `ociTls`: reach a loopback registry over TLS (by default plain HTTP, as docker does for localhost).
 */
export function remoteChartRef(
  source: Exclude<ChartSource, { form: "local" }>,
  opts: { privateRepo?: string | undefined; ociTls: boolean },
): ChartRef {
  if (source.form === "repo") {
    const version = source.version !== undefined ? ["--version", source.version] : [];
    if (opts.privateRepo !== undefined) return { chart: `${opts.privateRepo}/${source.name}`, flags: version };
    return { chart: source.name, flags: ["--repo", source.repoUrl, ...version] };
  }
  const flags: string[] = [];
  if (isLoopbackHost(ociHost(source.reference)) && !opts.ociTls) flags.push("--plain-http");
  if (source.digest !== undefined) return { chart: `${source.reference}@${source.digest}`, flags };
  const v = source.tag !== undefined ? tagToVersion(source.tag) : source.version;
  if (v !== undefined) flags.push("--version", v);
  return { chart: source.reference, flags };
}
