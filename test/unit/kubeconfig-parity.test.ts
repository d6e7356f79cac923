/**
 * A kubeconfig is read from js-yaml's syntax tree when the document is one both parsers describe
 * the same way, and by the `yaml` library otherwise (provider/kube/kubeconfig.ts, parseKubeconfig).
 * Whichever path reads it, the result must be the `yaml` library's (parseKubeconfigFully, the
 * reference): the same clusters, users and contexts with the same text, booleans and file paths,
 * or the same error message. These tests hold the fast path to that, and check it is taken.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, test } from "node:test";
import fc from "fast-check";
import { parseKubeconfig, parseKubeconfigFully } from "../../provider/kube/kubeconfig.js";

type Outcome = { value: unknown } | { error: string };

function outcome(read: () => unknown): Outcome {
  try {
    return { value: read() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Both readings, with and without a base directory (file references), agree. */
function assertSameReading(text: string): void {
  for (const baseDir of [undefined, "/etc/kube"]) {
    assert.deepStrictEqual(
      outcome(() => parseKubeconfig(text, baseDir)),
      outcome(() => parseKubeconfigFully(text, baseDir)),
      JSON.stringify(text),
    );
  }
}

const CERT = Buffer.from("-----BEGIN CERTIFICATE-----\nMIIC...\n-----END CERTIFICATE-----\n").toString("base64");

/** What kubectl config view --raw, kind and k3s write. */
const KUBECTL_WRITTEN = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${CERT}
    server: https://127.0.0.1:6443
  name: kind-dev
contexts:
- context:
    cluster: kind-dev
    namespace: team-a
    user: kind-dev
  name: kind-dev
current-context: kind-dev
kind: Config
preferences: {}
users:
- name: kind-dev
  user:
    client-certificate-data: ${CERT}
    client-key-data: ${CERT}
`;

describe("kubeconfig: the fast reading gives the yaml library's result", () => {
  test("documents written by kubectl, and every scalar spelling kubeconfig fields meet", () => {
    assertSameReading(KUBECTL_WRITTEN);
    assertSameReading(KUBECTL_WRITTEN.replace(/\n/g, "\r\n"));
    assertSameReading(`\uFEFF${KUBECTL_WRITTEN}`);
    const values = [
      "0123",
      "1e3",
      "0x1F",
      "+12",
      ".5",
      ".inf",
      "true",
      "True",
      "TRUE",
      "false",
      "yes",
      "No",
      "on",
      "OFF",
      "y",
      "n",
      "~",
      "null",
      "NULL",
      "",
      "''",
      '""',
      "'true'",
      '"yes"',
      '"a\\tb\\u00e9"',
      "'it''s'",
      "s3cr3t#x",
      "a #comment",
      "x: y",
      "[a, b]",
      "{a: b}",
      "- a",
      "|\n  block\n  text\n",
      ">-\n  folded\n  text\n",
      "multi\n  line plain",
      "!!str yes",
      "!!bool true",
      "!!int 7",
      "&a x",
      "*a",
      "%x",
      "@x",
      "`x`",
    ];
    for (const v of values) {
      assertSameReading(
        `clusters:\n- name: c\n  cluster:\n    server: ${v}\n    insecure-skip-tls-verify: ${v}\n    tls-server-name: ${v}\nusers:\n- name: u\n  user:\n    token: ${v}\n    password: ${v}\n    as-groups: [${v}]\ncurrent-context: ${v}\n`,
      );
      assertSameReading(`users:\n- name: u\n  user: {username: ${v}, as-user-extra: {${v}: [x]}}\n`);
    }
  });

  test("documents the fast reading leaves to the yaml library: tags, aliases, directives, tabs, duplicates, several documents, exec and auth-provider blocks", () => {
    for (const text of [
      "%YAML 1.1\n---\nclusters:\n- name: c\n  cluster: {server: s, insecure-skip-tls-verify: yes}\n",
      "clusters:\n- name: c\n  cluster: &x {server: s}\n- name: d\n  cluster: *x\n",
      "clusters:\n- name: c\n  cluster: {server: !!str 1}\n",
      "clusters:\n- name: c\n  cluster:\n\tserver: s\n",
      "clusters:\n- name: c\n  cluster: {server: s,\tinsecure-skip-tls-verify: true}\n",
      // Where the two libraries disagree (found by fuzzing): js-yaml accepts these, the yaml library does not.
      "users:\n- name: u\n  user:\n    as-groups:\n    - a\n    -\t b\n",
      "users:\n- name: u\n  user:\n    password: >-\n      p\n  \t#|  q\n",
      "users:\n- name: u\n  user:\n    as-groups:\n    - !! str b\n",
      "users:\n- name: u\n  user:\n    as-groups:\n    - ! ? tr b\n",
      `clusters:\n- name: c\n  cluster:\n    ${"k".repeat(1025)}: x\n`,
      "clusters:\n- name: c\n  cluster: {server: a, server: b}\n",
      "clusters: []\n---\nusers: []\n",
      "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./bin/plugin\n      args: [1, true, null, 0x1F]\n      interactiveMode: Never\n",
      "users:\n- name: u\n  user:\n    auth-provider: {name: oidc, config: {id-token: 123, refresh: yes}}\n",
      "users:\n- name: u\n  user:\n    as-user-extra: {1: [a], true: [b], null: [c], '2': [d]}\n",
      "? [a]\n: b\n",
      "- not a mapping\n",
      "",
      "# only a comment\n",
    ]) {
      assertSameReading(text);
    }
  });

  // Values drawn from what makes YAML scalars tricky, rendered in every scalar style; booleans and
  // base64 fields mostly get values kubectl accepts, so most documents are read to the end.
  const tricky = fc.oneof(
    fc.constantFrom(
      "true",
      "False",
      "yes",
      "off",
      "~",
      "null",
      "0123",
      "1e3",
      "0x1F",
      ".nan",
      "-",
      "?",
      ":",
      "#",
      "&a",
      "*a",
      "!x",
      "|",
      ">",
      "%",
      "@",
      "`",
      "'",
      '"',
      "{",
      "}",
      "[",
      "]",
      ",",
      "https://h:6443",
      "a b",
      "a: b",
      "a #b",
      "a#b",
    ),
    fc.string({ unit: fc.constantFrom(..."ab0:# -'\"\\{}[],&*!|>%@`\n\u00e9\u2028"), maxLength: 12 }),
    fc.string({ unit: fc.constantFrom(..."abcXYZ019-._/"), minLength: 1, maxLength: 12 }),
  );
  const style = (text: fc.Arbitrary<string>): fc.Arbitrary<string> =>
    fc
      .tuple(
        text,
        fc.constantFrom("plain", "plain", "single", "double", "literal", "folded"),
        fc.constantFrom("", "-", "+"),
      )
      .map(([s, how, chomp]) => {
        if (how === "single") return `'${s.replace(/'/g, "''")}'`;
        if (how === "double") return JSON.stringify(s);
        if (how === "literal" || how === "folded")
          return `${how === "literal" ? "|" : ">"}${chomp}\n${s
            .split("\n")
            .map((l) => `      ${l}`)
            .join("\n")}`;
        return s;
      });
  const styled = style(tricky);
  const boolean = fc.oneof(
    style(fc.constantFrom("true", "false", "True", "FALSE", "yes", "No", "on", "OFF", "y", "n", "1", "")),
    styled,
  );
  const base64 = fc.oneof(
    style(fc.constantFrom(CERT, "YQ==", "", `${CERT.slice(0, 40)}\n${CERT.slice(40, 80)}`)),
    styled,
  );
  const valueFor = (key: string): fc.Arbitrary<string> =>
    key.endsWith("-data") ? base64 : key === "insecure-skip-tls-verify" ? boolean : styled;
  const field = (names: readonly string[]): fc.Arbitrary<[string, string]> =>
    fc.constantFrom(...names).chain((k) => valueFor(k).map((v): [string, string] => [k, v]));
  const CLUSTER_FIELDS = [
    "server",
    "certificate-authority",
    "certificate-authority-data",
    "insecure-skip-tls-verify",
    "tls-server-name",
  ];
  const USER_FIELDS = [
    "client-certificate",
    "client-certificate-data",
    "client-key",
    "client-key-data",
    "token",
    "tokenFile",
    "username",
    "password",
    "as",
    "as-uid",
  ];
  const name = style(fc.constantFrom("a", "b", "kind-dev", "0", "true", "x y"));
  const entry = (kind: string, names: readonly string[]): fc.Arbitrary<string> =>
    fc
      .tuple(name, fc.uniqueArray(field(names), { maxLength: 4, selector: ([k]) => k }), fc.boolean())
      .map(([n, fields, flow]) =>
        flow && fields.every(([, v]) => !v.includes("\n"))
          ? `- name: ${n}\n  ${kind}: {${fields.map(([k, v]) => `${k}: ${v}`).join(", ")}}\n`
          : `- name: ${n}\n  ${kind}:\n${fields.map(([k, v]) => `    ${k}: ${v}`).join("\n")}\n`,
      );
  const document = fc
    .tuple(
      fc.array(entry("cluster", CLUSTER_FIELDS), { maxLength: 2 }),
      fc.array(entry("user", USER_FIELDS), { maxLength: 2 }),
      fc.array(entry("context", ["cluster", "user", "namespace"]), { maxLength: 2 }),
      name,
    )
    .map(
      ([clusters, users, contexts, current]) =>
        `apiVersion: v1\nclusters:\n${clusters.join("")}users:\n${users.join("")}contexts:\n${contexts.join("")}current-context: ${current}\n`,
    );

  test("generated kubeconfigs (property)", () => {
    fc.assert(fc.property(document, assertSameReading), { numRuns: 400 });
  });

  test("kubectl's document with random edits: inserted, deleted and replaced characters (property)", () => {
    const edit = fc.tuple(
      fc.nat(),
      fc.nat({ max: 3 }),
      fc.string({ unit: fc.constantFrom(..." \n-:#'\"{}[],&*!|>%\t\\a0"), maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        let text = KUBECTL_WRITTEN;
        for (const [at, remove, insert] of edits) {
          const i = at % (text.length + 1);
          text = text.slice(0, i) + insert + text.slice(i + remove);
        }
        assertSameReading(text);
      }),
      { numRuns: 600 },
    );
  });

  test("a kubeconfig as kubectl writes it is read without loading the yaml library", () => {
    const script = `
      const { parseKubeconfig } = require(${JSON.stringify(path.resolve(__dirname, "../../provider/kube/kubeconfig.js"))});
      const config = parseKubeconfig(${JSON.stringify(KUBECTL_WRITTEN)}, undefined);
      const yaml = Object.keys(require.cache).filter((f) => f.includes("/node_modules/yaml/"));
      console.log(JSON.stringify({ context: config.currentContext, yaml: yaml.length }));`;
    const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { context: "kind-dev", yaml: 0 });
    // The counter-check: the probe does see the library when a document needs it.
    const fallback = script.replace(
      `parseKubeconfig(${JSON.stringify(KUBECTL_WRITTEN)}`,
      `parseKubeconfig(${JSON.stringify(`%YAML 1.1\n---\n${KUBECTL_WRITTEN}`)}`,
    );
    const r2 = spawnSync(process.execPath, ["-e", fallback], { encoding: "utf8" });
    assert.equal(r2.status, 0, r2.stderr);
    assert.ok((JSON.parse(r2.stdout) as { yaml: number }).yaml > 0);
  });
});
