// Certificates for a throwaway test cluster: a CA, the apiserver's serving certificate, an admin
// client certificate (O=system:masters), the service-account signing key, and the serving
// certificate of the lab's kubelet endpoints (what metrics-server scrapes). openssl CLI, EC P-256.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { runOk } from "./util";

export interface ClusterCerts {
  dir: string;
  caCrt: string;
  caKey: string;
  serverCrt: string;
  serverKey: string;
  adminCrt: string;
  adminKey: string;
  saKey: string;
  saPub: string;
  /** Serves the fake Nodes' kubelet endpoints on 127.0.0.1 (test/harness/kubelet-front.ts). */
  kubeletCrt: string;
  kubeletKey: string;
  /** The aggregation layer's request-header CA and the API server's proxy client certificate. */
  frontProxyCaCrt: string;
  frontProxyClientCrt: string;
  frontProxyClientKey: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await runOk("openssl", args, { cwd });
}

async function ecKey(file: string, cwd: string): Promise<void> {
  await openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", file], cwd);
}

async function signed(cwd: string, name: string, subject: string, ext: string, ca = "ca"): Promise<void> {
  await ecKey(`${name}.key`, cwd);
  await openssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`], cwd);
  fs.writeFileSync(path.join(cwd, `${name}.ext`), ext);
  await openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.crt`,
      "-CAkey",
      `${ca}.key`,
      "-set_serial",
      `0x${randomBytes(12).toString("hex")}`,
      "-days",
      "3650",
      "-sha256",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.crt`,
    ],
    cwd,
  );
}

/** A self-signed CA `<name>.crt`/`<name>.key` in `dir`. */
async function selfSignedCa(dir: string, name: string, cn: string, days: string): Promise<void> {
  await ecKey(`${name}.key`, dir);
  await openssl(
    [
      "req",
      "-x509",
      "-new",
      "-key",
      `${name}.key`,
      "-subj",
      `/CN=${cn}`,
      "-days",
      days,
      "-sha256",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
      "-out",
      `${name}.crt`,
    ],
    dir,
  );
}

export async function generateClusterCerts(dir: string, extraSans: string[] = []): Promise<ClusterCerts> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  await selfSignedCa(dir, "ca", "khook-test-ca", "3650");
  const sans = [
    "IP:127.0.0.1",
    "IP:127.96.0.1",
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
    ...extraSans,
  ];
  await Promise.all([
    signed(
      dir,
      "apiserver",
      "/CN=kube-apiserver",
      `subjectAltName=${sans.join(",")}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n`,
    ),
    signed(
      dir,
      "admin",
      "/O=system:masters/CN=khook-admin",
      "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n",
    ),
    signed(
      dir,
      "kubelet",
      "/CN=khook-lab-kubelet",
      "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n",
    ),
    // The aggregation layer: the API server proxies to aggregated APIs (metrics-server) as this
    // client, and they trust request headers signed by this CA (--requestheader-client-ca-file).
    (async () => {
      await selfSignedCa(dir, "front-proxy-ca", "khook-test-front-proxy-ca", "3650");
      await signed(
        dir,
        "front-proxy-client",
        "/CN=front-proxy-client",
        "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n",
        "front-proxy-ca",
      );
    })(),
    (async () => {
      await ecKey("sa.key", dir);
      await openssl(["pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
    })(),
  ]);
  const p = (f: string) => path.join(dir, f);
  return {
    dir,
    caCrt: p("ca.crt"),
    caKey: p("ca.key"),
    serverCrt: p("apiserver.crt"),
    serverKey: p("apiserver.key"),
    adminCrt: p("admin.crt"),
    adminKey: p("admin.key"),
    saKey: p("sa.key"),
    saPub: p("sa.pub"),
    kubeletCrt: p("kubelet.crt"),
    kubeletKey: p("kubelet.key"),
    frontProxyCaCrt: p("front-proxy-ca.crt"),
    frontProxyClientCrt: p("front-proxy-client.crt"),
    frontProxyClientKey: p("front-proxy-client.key"),
  };
}

/** A CA and a serving certificate it signed for 127.0.0.1: what an admission or conversion webhook on loopback presents. */
export interface ServingCerts {
  /** PEM of the CA: what a webhook configuration's `caBundle` holds (base64 of it). */
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** A fresh CA and a serving certificate for IP:127.0.0.1, in a temporary directory (openssl CLI, EC P-256). */
export async function generateServingCerts(dir: string, cn = "khook-test-webhook"): Promise<ServingCerts> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  await selfSignedCa(dir, "ca", `${cn}-ca`, "30");
  await signed(
    dir,
    "serving",
    `/CN=${cn}`,
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n",
  );
  const read = (f: string) => fs.readFileSync(path.join(dir, f), "utf8");
  return { caPem: read("ca.crt"), certPem: read("serving.crt"), keyPem: read("serving.key") };
}
