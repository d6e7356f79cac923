/** The KUDO MySQL operator's deploy plan (seed 001) as a khook spec: examples/kudo-mysql.khook.yaml. */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { planOffline } from "../../provider/engine/plan.js";
import { loadSpec } from "../../provider/load-spec.js";
import { repoRoot } from "./support/spec-files.js";

const FILE = path.join(repoRoot(), "examples", "kudo-mysql.khook.yaml");

test("KUDO deploy plan: steps deploy, init, cleanup run serially, in KUDO's order", () => {
  const spec = loadSpec({ file: FILE, env: {} });
  const plan = planOffline(spec);
  assert.deepEqual(
    plan.map((p) => [p.name, p.type, p.level]),
    [
      ["deploy", "apply", 0],
      ["deploy-ready", "wait", 1],
      ["init", "apply", 2],
      ["cleanup", "delete", 3],
    ],
  );
  assert.ok(plan.every((p) => p.action === "run"));
});

test("KUDO task deploy: deployment, pvc and service templates applied together with the credentials", () => {
  const spec = loadSpec({ file: FILE, env: {} });
  const deploy = spec.stepsByName.get("deploy")!;
  assert.equal(deploy.type, "apply");
  const files = (deploy.action as { manifests: { file?: string }[] }).manifests
    .map((m) => m.file)
    .filter((f) => f !== undefined);
  assert.deepEqual(files, [
    "./kudo-mysql/templates/pvc.yaml",
    "./kudo-mysql/templates/deployment.yaml",
    "./kudo-mysql/templates/service.yaml",
  ]);
});

test("KUDO delete: true: cleanup deletes exactly what the init task applied", () => {
  const spec = loadSpec({ file: FILE, env: {} });
  const init = spec.stepsByName.get("init")!.action as { manifests: unknown };
  const cleanup = spec.stepsByName.get("cleanup")!.action as { manifests: unknown };
  assert.deepEqual(cleanup.manifests, init.manifests);
});

test("KUDO parameters: the password parameter has KUDO's default, and a secret source overrides it and is redacted", () => {
  const defaulted = loadSpec({ file: FILE, env: {} });
  const inline = (spec: typeof defaulted): string =>
    (spec.stepsByName.get("deploy")!.action as { manifests: { inline?: string }[] }).manifests[0]!.inline ?? "";
  assert.match(inline(defaulted), /password: password\n/);
  const secret = loadSpec({ file: FILE, env: { KHOOK_SECRET_PASSWORD: "s3cret-mysql-pw" } });
  assert.match(inline(secret), /password: s3cret-mysql-pw\n/);
  assert.equal(secret.redactor.redact("pw=s3cret-mysql-pw"), "pw=***");
  assert.notEqual(
    secret.stepsByName.get("deploy")!.inputHash,
    defaulted.stepsByName.get("deploy")!.inputHash,
    "a parameter is an input of the steps it is substituted into",
  );
  assert.equal(
    secret.stepsByName.get("init")!.inputHash,
    defaulted.stepsByName.get("init")!.inputHash,
    "and of no other step",
  );
});
