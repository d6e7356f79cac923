/** sprig's deterministic crypto: derivePassword (Master Password algorithm), decryptAES, buildCustomCert. */
import { createDecipheriv, createHmac, createPrivateKey, scryptSync, X509Certificate } from "node:crypto";
import { def } from "../conv.js";
import { fromBytes, toBytes } from "../gostring.js";
import { type FuncDef, GoCallError, GoStruct, type GoType, T_STRING, T_UINT32 } from "../values.js";
import { base64Decode } from "./encoding.js";

const S = T_STRING;

const masterPasswordSeed = "com.lyndir.masterpassword";
const passwordTypeTemplates: Record<string, string[]> = {
  maximum: ["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
  long: [
    "CvcvnoCvcvCvcv",
    "CvcvCvcvnoCvcv",
    "CvcvCvcvCvcvno",
    "CvccnoCvcvCvcv",
    "CvccCvcvnoCvcv",
    "CvccCvcvCvcvno",
    "CvcvnoCvccCvcv",
    "CvcvCvccnoCvcv",
    "CvcvCvccCvcvno",
    "CvcvnoCvcvCvcc",
    "CvcvCvcvnoCvcc",
    "CvcvCvcvCvccno",
    "CvccnoCvccCvcv",
    "CvccCvccnoCvcv",
    "CvccCvccCvcvno",
    "CvcvnoCvccCvcc",
    "CvcvCvccnoCvcc",
    "CvcvCvccCvccno",
    "CvccnoCvcvCvcc",
    "CvccCvcvnoCvcc",
    "CvccCvcvCvccno",
  ],
  medium: ["CvcnoCvc", "CvcCvcno"],
  short: ["Cvcn"],
  basic: ["aaanaaan", "aannaaan", "aaannaaa"],
  pin: ["nnnn"],
};
const templateCharacters: Record<string, string> = {
  V: "AEIOU",
  C: "BCDFGHJKLMNPQRSTVWXYZ",
  v: "aeiou",
  c: "bcdfghjklmnpqrstvwxyz",
  A: "AEIOUBCDFGHJKLMNPQRSTVWXYZ",
  a: "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
  n: "0123456789",
  o: "@&%?,=[]_:-+*$#!'^~;()/.",
  x: "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
};

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function derivePassword(counter: number, passwordType: string, password: string, user: string, site: string): string {
  const templates = Object.hasOwn(passwordTypeTemplates, passwordType)
    ? passwordTypeTemplates[passwordType]
    : undefined;
  if (!templates) return "cannot find password template " + passwordType;
  const seed = Buffer.from(masterPasswordSeed, "latin1");
  const userB = toBytes(user);
  const salt = Buffer.concat([seed, u32(userB.length), userB]);
  const key = scryptSync(toBytes(password), salt, 64, { N: 32768, r: 8, p: 2, maxmem: 256 * 1024 * 1024 });
  const siteB = toBytes(site);
  const msg = Buffer.concat([seed, u32(siteB.length), siteB, u32(counter)]);
  const hmac = createHmac("sha256", key).update(msg).digest();
  const temp = templates[hmac[0]! % templates.length]!;
  let out = "";
  for (let i = 0; i < temp.length; i++) {
    const passChars = templateCharacters[temp[i]!]!;
    out += passChars[hmac[i + 1]! % passChars.length];
  }
  return out;
}

function decryptAES(password: string, crypt64: string): string {
  if (crypt64 === "") return "";
  const key = Buffer.alloc(32);
  toBytes(password).copy(key, 0, 0, 32);
  let crypt: Buffer;
  try {
    crypt = toBytes(base64Decode(crypt64));
  } catch (e) {
    throw new GoCallError((e as Error).message);
  }
  if (crypt.length < 16)
    throw new GoCallError("runtime error: slice bounds out of range (ciphertext shorter than one block)");
  const iv = crypt.subarray(0, 16);
  const body = crypt.subarray(16);
  if (body.length % 16 !== 0) throw new GoCallError("crypto/cipher: input not full blocks");
  const d = createDecipheriv("aes-256-cbc", key, iv);
  d.setAutoPadding(false);
  const decrypted = Buffer.concat([d.update(body), d.final()]);
  if (decrypted.length === 0) throw new GoCallError("runtime error: index out of range [-1]");
  const padding = decrypted[decrypted.length - 1]!;
  const end = decrypted.length - padding;
  if (end < 0) throw new GoCallError("runtime error: slice bounds out of range (bad padding)");
  return fromBytes(decrypted.subarray(0, end));
}

const T_CERTIFICATE: GoType = {
  kind: "struct",
  str: "sprig.certificate",
  fields: [
    { name: "Cert", type: T_STRING },
    { name: "Key", type: T_STRING },
  ],
};

/** encoding/pem.Decode's first block: [type, der bytes] or undefined. */
function pemDecode(data: string): { type: string; der: Buffer } | undefined {
  const m = /-----BEGIN ([^\n-]*)-----\r?\n([\s\S]*?)-----END \1-----/.exec(data);
  if (!m) return undefined;
  const body = m[2]!
    .split(/\r?\n/)
    .filter((l) => !/^[\w-]+:/.test(l))
    .join("")
    .replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) return undefined;
  return { type: m[1]!, der: Buffer.from(body, "base64") };
}

function buildCustomCert(b64cert: string, b64key: string): GoStruct {
  let cert: string;
  let key: string;
  try {
    cert = base64Decode(b64cert);
  } catch {
    throw new GoCallError("unable to decode base64 certificate");
  }
  try {
    key = base64Decode(b64key);
  } catch {
    throw new GoCallError("unable to decode base64 private key");
  }
  const block = pemDecode(cert);
  if (!block) throw new GoCallError("unable to decode certificate");
  try {
    new X509Certificate(block.der);
  } catch {
    throw new GoCallError("error parsing certificate: decodedCert.Bytes: x509: malformed certificate");
  }
  const kb = pemDecode(key);
  if (!kb) throw new GoCallError("error parsing private key: no PEM data in input");
  if (kb.type !== "PRIVATE KEY" && !kb.type.endsWith(" PRIVATE KEY"))
    throw new GoCallError("error parsing private key: no private key data in PEM block of type " + kb.type);
  const kind = kb.type === "PRIVATE KEY" ? "PKCS#8" : kb.type.slice(0, -12);
  try {
    if (kind === "PKCS#8") createPrivateKey({ key: kb.der, format: "der", type: "pkcs8" });
    else if (kind === "RSA") createPrivateKey({ key: kb.der, format: "der", type: "pkcs1" });
    else if (kind === "EC") createPrivateKey({ key: kb.der, format: "der", type: "sec1" });
    else throw new Error("unsupported");
  } catch {
    throw new GoCallError("error parsing private key: invalid " + kind + " private key");
  }
  return new GoStruct(T_CERTIFICATE, [cert, key]);
}

export const cryptoFunctions: Record<string, FuncDef> = {
  derivePassword: def([T_UINT32, S, S, S, S], ([c, t, p, u, s]) =>
    derivePassword(Number((c as { v: bigint }).v), t as string, p as string, u as string, s as string),
  ),
  decryptAES: def([S, S], ([p, c]) => decryptAES(p as string, c as string)),
  buildCustomCert: def([S, S], ([c, k]) => buildCustomCert(c as string, k as string)),
};
