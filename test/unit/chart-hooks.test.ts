/**
 * helm-wait-hooks-keep-helm-wait (the scan): khook waits itself only for a chart with no
 * hooks, because helm --wait runs post-install/post-upgrade hooks only after readiness.
 * Archives are made by the real `tar` (gzip, ustar and GNU long names), as `helm package` does.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { archiveMayHaveHooks, tarEntries } from "../../provider/helm/chart-hooks.js";
import { chartMayHaveHooks } from "../../provider/steps/helm/read-chart.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "khook-chart-hooks-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let counter = 0;

function chartDir(files: Record<string, string>): string {
  const dir = path.join(root, `chart-${++counter}`);
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

function tgz(dir: string, format: "ustar" | "gnu" | "pax" = "gnu"): string {
  const file = path.join(root, `archive-${++counter}.tgz`);
  execFileSync("tar", [`--format=${format}`, "-czf", file, "-C", path.dirname(dir), path.basename(dir)]);
  return file;
}

const CHART = {
  "Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
  "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
};
const HOOK = {
  "templates/job.yaml":
    'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    "helm.sh/hook": post-install\n',
};

describe("helm-wait-hooks-keep-helm-wait", () => {
  test("a chart directory without the hook annotation anywhere has no hooks; one file with it is enough", () => {
    assert.equal(chartMayHaveHooks(chartDir(CHART)), false);
    assert.equal(chartMayHaveHooks(chartDir({ ...CHART, ...HOOK })), true);
    assert.equal(
      chartMayHaveHooks(
        chartDir({ ...CHART, "templates/_helpers.tpl": '{{- define "x" }}helm.sh/hook: test{{ end }}' }),
      ),
      true,
      "wherever it is written",
    );
  });

  test("a packaged chart is read from its archive, and a subchart archive inside it too", () => {
    assert.equal(chartMayHaveHooks(tgz(chartDir(CHART))), false);
    assert.equal(chartMayHaveHooks(tgz(chartDir({ ...CHART, ...HOOK }))), true);
    const sub = fs.readFileSync(tgz(chartDir({ ...CHART, ...HOOK })));
    const parent = chartDir(CHART);
    fs.mkdirSync(path.join(parent, "charts"));
    fs.writeFileSync(path.join(parent, "charts", "sub-0.1.0.tgz"), sub);
    assert.equal(chartMayHaveHooks(parent), true, "the directory's subchart archive");
    assert.equal(chartMayHaveHooks(tgz(parent)), true, "the archive's subchart archive");
  });

  test("long names (GNU, pax, and ustar's prefix) are read, so a subchart archive deep in the tree is still found", () => {
    for (const format of ["gnu", "pax", "ustar"] as const) {
      // ustar splits a path into a 155-byte prefix and a 100-byte name; the others hold any length.
      const deep = `charts/${"d".repeat(format === "ustar" ? 90 : 120)}/charts/sub-0.1.0.tgz`;
      const dir = chartDir(CHART);
      fs.mkdirSync(path.dirname(path.join(dir, deep)), { recursive: true });
      fs.writeFileSync(path.join(dir, deep), fs.readFileSync(tgz(chartDir({ ...CHART, ...HOOK }))));
      const archive = fs.readFileSync(tgz(dir, format));
      const names = tarEntries(execFileSync("gzip", ["-dc"], { input: archive }))!.map((e) => e.name);
      assert.ok(
        names.some((n) => n.endsWith(deep)),
        `${format}: ${names.join(", ")}`,
      );
      assert.equal(archiveMayHaveHooks(archive), true, format);
    }
  });

  test("anything that cannot be read counts as may-have-hooks (helm's own --wait then)", () => {
    assert.equal(chartMayHaveHooks(path.join(root, "no-such-chart")), true);
    const bad = path.join(root, "bad.tgz");
    fs.writeFileSync(bad, "not gzip");
    assert.equal(chartMayHaveHooks(bad), true);
    const truncated = path.join(root, "truncated.tgz");
    const tar = execFileSync("gzip", ["-dc"], { input: fs.readFileSync(tgz(chartDir(CHART))) });
    fs.writeFileSync(truncated, execFileSync("gzip", ["-c"], { input: tar.subarray(0, 700) }));
    assert.equal(chartMayHaveHooks(truncated), true, "a header promising more bytes than there are");
  });
});
