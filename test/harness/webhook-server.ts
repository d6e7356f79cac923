/**
 * The hostile cluster's webhook (issue 19 §1): a real HTTPS admission and conversion webhook on
 * loopback that the test controls. The local kube-apiserver calls it at `clientConfig.url:
 * https://127.0.0.1:PORT/...` with the `caBundle` it is registered with; it can be
 *
 *   down       nothing listens on its port (the API server's call is refused),
 *   hang       it accepts the call and never answers (past the webhook's timeoutSeconds),
 *   error      it answers 500,
 *   untrusted  it serves with a certificate from a CA that is not in the caBundle
 *              (a CA injected late: cert-manager's cainjector has not patched it in yet),
 *   allow      it admits every object (and converts between versions),
 *   deny       it denies every object with DENY_MESSAGE (a deliberate denial).
 *
 * Objects for registering it (webhook configurations scoped to one namespace with `failurePolicy:
 * Fail`, a CRD whose conversion webhook it is, an aggregated APIService that is never available)
 * are built by the functions below.
 */
import fs from "node:fs";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { generateServingCerts, type ServingCerts } from "./certs";

export type WebhookMode = "down" | "hang" | "error" | "untrusted" | "allow" | "deny";

/** What the webhook says when it denies. */
export const DENY_MESSAGE = "khook's hostile webhook denies this object on purpose";

interface AdmissionReview {
  request?: { uid?: string };
}
interface ConversionReview {
  request?: { uid?: string; desiredAPIVersion?: string; objects?: Record<string, unknown>[] };
}

export class HostileWebhook {
  /** Requests received, per path (`/validate`, `/mutate`, `/convert`). */
  readonly calls = new Map<string, number>();
  /** When the webhook last started admitting (mode `allow`), epoch ms: the bench measures from it. */
  allowingSince: number | undefined;
  private modeNow: WebhookMode = "down";
  private server: https.Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly trusted: ServingCerts,
    private readonly other: ServingCerts,
  ) {}

  /** Prepares two CAs (the registered one and another) and a port; starts in `mode` (default `down`). */
  static async start(mode: WebhookMode = "down"): Promise<HostileWebhook> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-webhook-"));
    const [trusted, other] = await Promise.all([
      generateServingCerts(path.join(dir, "trusted")),
      generateServingCerts(path.join(dir, "other"), "khook-test-other"),
    ]);
    fs.rmSync(dir, { recursive: true, force: true });
    // A free port, kept for the webhook's life: it is closed and reopened as the mode changes.
    const probe = https.createServer({ cert: trusted.certPem, key: trusted.keyPem });
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const hook = new HostileWebhook(port, trusted, other);
    await hook.set(mode);
    return hook;
  }

  /** base64 of the CA the webhook's configurations trust: their `caBundle`. */
  get caBundle(): string {
    return Buffer.from(this.trusted.caPem).toString("base64");
  }

  /** base64 of a CA that did not sign what the webhook serves (a wrong or stale bundle). */
  get wrongCaBundle(): string {
    return Buffer.from(this.other.caPem).toString("base64");
  }

  url(p: "/validate" | "/mutate" | "/convert"): string {
    return `https://127.0.0.1:${this.port}${p}`;
  }

  get mode(): WebhookMode {
    return this.modeNow;
  }

  /** Switches behaviour; `down` closes the port (and every open connection), any other mode listens. */
  async set(mode: WebhookMode): Promise<void> {
    const certs = mode === "untrusted" ? this.other : this.trusted;
    if (mode === "down") {
      await this.stopListening();
    } else if (this.server === undefined) {
      await this.listen(certs);
    } else {
      this.server.setSecureContext({ cert: certs.certPem, key: certs.keyPem });
      // Connections made under the old certificate keep it: end them so the next call sees the new one.
      for (const s of this.sockets) s.destroy();
    }
    this.modeNow = mode;
    if (mode === "allow") this.allowingSince = Date.now();
  }

  count(p?: string): number {
    if (p !== undefined) return this.calls.get(p) ?? 0;
    return [...this.calls.values()].reduce((a, b) => a + b, 0);
  }

  close(): Promise<void> {
    return this.stopListening();
  }

  private async listen(certs: ServingCerts): Promise<void> {
    const server = https.createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.answer(req.url ?? "", Buffer.concat(chunks).toString("utf8"), res));
    });
    server.on("secureConnection", (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
  }

  private async stopListening(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    for (const s of this.sockets) s.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  private answer(url: string, body: string, res: import("node:http").ServerResponse): void {
    const p = url.split("?")[0] ?? url;
    this.calls.set(p, (this.calls.get(p) ?? 0) + 1);
    const mode = this.modeNow;
    if (mode === "hang") return; // the API server gives up at the webhook's timeoutSeconds
    if (mode === "error") {
      res.writeHead(500, { "content-type": "text/plain" }).end("the webhook's backend is not ready");
      return;
    }
    const json = (o: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(o));
    if (p === "/convert") {
      const review = JSON.parse(body) as ConversionReview;
      const to = review.request?.desiredAPIVersion ?? "";
      const converted = (review.request?.objects ?? []).map((o) => ({ ...o, apiVersion: to }));
      json({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        response: { uid: review.request?.uid ?? "", convertedObjects: converted, result: { status: "Success" } },
      });
      return;
    }
    const review = JSON.parse(body) as AdmissionReview;
    const allowed = mode !== "deny";
    json({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: {
        uid: review.request?.uid ?? "",
        allowed,
        ...(allowed ? {} : { status: { code: 403, reason: "Forbidden", message: DENY_MESSAGE } }),
      },
    });
  }
}

/** The webhook's rules: ConfigMaps created or updated in `namespace` only (`namespaceSelector`), so other tests are not touched. */
function webhookEntry(
  name: string,
  url: string,
  caBundle: string,
  namespace: string,
  timeoutSeconds: number,
): Record<string, unknown> {
  return {
    name,
    clientConfig: { url, ...(caBundle !== "" ? { caBundle } : {}) },
    rules: [
      {
        apiGroups: [""],
        apiVersions: ["v1"],
        operations: ["CREATE", "UPDATE"],
        resources: ["configmaps"],
        scope: "Namespaced",
      },
    ],
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
    failurePolicy: "Fail",
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    timeoutSeconds,
  };
}

export interface WebhookRegistration {
  /** The configuration's name, and its webhook's (`<name>.khook.test`). */
  name: string;
  namespace: string;
  /** Default: the webhook's trusted CA. "" registers none (a CA still to be injected). */
  caBundle?: string;
  /** Default 2: a hanging webhook fails the API server's call after this. */
  timeoutSeconds?: number;
}

/** A ValidatingWebhookConfiguration calling `hook` for ConfigMaps in one namespace, `failurePolicy: Fail`. */
export function validatingWebhookConfiguration(hook: HostileWebhook, r: WebhookRegistration): Record<string, unknown> {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: r.name },
    webhooks: [
      webhookEntry(
        `${r.name}.khook.test`,
        hook.url("/validate"),
        r.caBundle ?? hook.caBundle,
        r.namespace,
        r.timeoutSeconds ?? 2,
      ),
    ],
  };
}

/** The same as a MutatingWebhookConfiguration (the webhook admits without a patch). */
export function mutatingWebhookConfiguration(hook: HostileWebhook, r: WebhookRegistration): Record<string, unknown> {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: r.name },
    webhooks: [
      {
        ...webhookEntry(
          `${r.name}.khook.test`,
          hook.url("/mutate"),
          r.caBundle ?? hook.caBundle,
          r.namespace,
          r.timeoutSeconds ?? 2,
        ),
        reinvocationPolicy: "Never",
      },
    ],
  };
}

/**
 * A namespaced CRD `widgets.<group>` serving v1 (storage) and v2, converted by `hook`: creating a v2
 * object makes the API server call the conversion webhook (v2 → v1 for storage).
 */
export function conversionCrd(hook: HostileWebhook, group: string): Record<string, unknown> {
  const schema = {
    openAPIV3Schema: {
      type: "object",
      properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      versions: [
        { name: "v1", served: true, storage: true, schema },
        { name: "v2", served: true, storage: false, schema },
      ],
      conversion: {
        strategy: "Webhook",
        webhook: {
          clientConfig: { url: hook.url("/convert"), caBundle: hook.caBundle },
          conversionReviewVersions: ["v1"],
        },
      },
    },
  };
}

/**
 * An aggregated APIService for `<group>/v1beta1` backed by a Service that does not exist: never
 * available, like metrics-server before its pod runs. Discovery of its group fails with
 * `the server is currently unable to handle the request`.
 */
export function unavailableApiService(group: string, namespace: string): Record<string, unknown> {
  return {
    apiVersion: "apiregistration.k8s.io/v1",
    kind: "APIService",
    metadata: { name: `v1beta1.${group}` },
    spec: {
      group,
      version: "v1beta1",
      service: { name: "absent", namespace, port: 443 },
      insecureSkipTLSVerify: true,
      groupPriorityMinimum: 100,
      versionPriority: 100,
    },
  };
}
