/**
 * kubectl apply's last-applied configuration: how kubectl encodes the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation (byte for
 * byte, so objects move freely between kubectl and khook), how it reads it
 * back, and how it names what it applied.
 */
import { isMap, type JsonMap } from "./threeway.js";
import type { ApiResource, KubeObject } from "./types.js";

export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/** The API server's limit on an object's annotations, keys and values together (apimachinery's TotalAnnotationSizeLimitB). */
export const ANNOTATIONS_LIMIT_BYTES = 256 * 1024;

/**
 * Whether kubectl's client-side apply of `obj` would be refused with `metadata.annotations: Too
 * long`: its annotations, with the last-applied copy of the object added, exceed the limit (big
 * CRDs: six of prometheus-operator's ten). Counted as the API server counts: bytes of every key and value.
 */
export function lastAppliedTooLarge(obj: KubeObject): boolean {
  let bytes = 0;
  for (const [k, v] of Object.entries(withLastApplied(obj).metadata?.annotations ?? {}))
    bytes += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  return bytes > ANNOTATIONS_LIMIT_BYTES;
}

/**
 * kubectl's GetModifiedConfiguration: the object serialized without the
 * last-applied annotation (annotations become `{}` when empty, exactly as
 * kubectl writes them), then set as that annotation. The create body and the
 * patch's "modified" side are both this object.
 */
export function withLastApplied(obj: KubeObject): KubeObject {
  const copy = structuredClone(obj);
  const meta = (copy.metadata ??= {});
  const annots = { ...(meta.annotations ?? {}) };
  delete annots[LAST_APPLIED_ANNOTATION];
  meta.annotations = annots;
  const encoded = lastAppliedJson(copy);
  meta.annotations = { ...annots, [LAST_APPLIED_ANNOTATION]: encoded };
  return copy;
}

/** The last-applied configuration stored on a live object, if any (unparseable → none, like an absent one). */
export function parseLastApplied(live: KubeObject): JsonMap | undefined {
  const text = live.metadata?.annotations?.[LAST_APPLIED_ANNOTATION];
  if (typeof text !== "string" || text === "") return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isMap(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Encodes like Go's encoding/json on an unstructured object (what kubectl
 * stores): map keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped, and a
 * trailing newline. Identical manifests thus give identical annotations
 * whether kubectl or khook applied them.
 */
export function lastAppliedJson(v: unknown): string {
  return `${goJson(v)}\n`;
}

function goJson(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return goString(v);
  if (typeof v === "number") return Number.isFinite(v) ? JSON.stringify(v) : "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (Array.isArray(v)) return `[${v.map(goJson).join(",")}]`;
  if (typeof v === "object") {
    const keys = Object.keys(v as object)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort(compareUtf8);
    return `{${keys.map((k) => `${goString(k)}:${goJson((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return "null";
}

function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Go sorts map keys by their UTF-8 bytes. */
function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** `deployment.apps/x`, `configmap/y` — kubectl's printed name. */
export function kubectlRef(rt: ApiResource, name: string): string {
  const k = rt.kind.toLowerCase();
  return `${rt.group === "" ? k : `${k}.${rt.group}`}/${name}`;
}
