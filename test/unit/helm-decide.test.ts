/**
 * The rule of a helm: step (provider/helm/decide.ts) as a table: facts in, decision or the next
 * fact it needs out. No helm, no cluster.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decideRelease, type ReleaseDecisionOrNeed, type ReleaseFacts } from "../../provider/helm/decide.js";
import type { HelmRevision } from "../../provider/helm/release.js";

const rev = (revision: number, status: string, chart = "demo-1.0.0"): HelmRevision => ({
  revision,
  status,
  chart,
  updated: "",
  app_version: "",
  description: "",
});

const base: ReleaseFacts = {
  release: "web",
  namespace: "apps",
  history: undefined,
  skipIfInstalled: false,
  specHasHooks: false,
  localChart: false,
};
const chart = { name: "demo", version: "1.0.0" };
/** Every fact gathered, for a deployed release that matches the step. */
const deployed: ReleaseFacts = {
  ...base,
  history: [rev(1, "superseded"), rev(2, "deployed")],
  values: { a: 1 },
  deployedValues: { a: 1 },
  desiredChart: chart,
};

interface Case {
  rule: string;
  facts: ReleaseFacts;
  /** The action, or `need <fact>`. */
  expect: string;
  reason?: RegExp;
}

const cases: Case[] = [
  { rule: "no release: the values are read first", facts: base, expect: "need values" },
  {
    rule: "no release, values read: the chart is resolved next",
    facts: { ...base, values: {} },
    expect: "need desiredChart",
  },
  {
    rule: "no release -> install",
    facts: { ...base, values: {}, desiredChart: chart },
    expect: "install",
    reason: /^not installed -> demo@1\.0\.0$/,
  },
  {
    rule: "only an uninstalled release -> install, naming the revision it replaces",
    facts: { ...base, history: [rev(3, "uninstalled")], values: {}, desiredChart: chart },
    expect: "install",
    reason: /^revision 3 \(demo-1\.0\.0, uninstalled\) -> demo@1\.0\.0$/,
  },
  {
    rule: "pending-upgrade -> pending, with the rollback to the last deployed revision",
    facts: { ...base, history: [rev(1, "superseded"), rev(2, "deployed"), rev(3, "pending-upgrade")] },
    expect: "pending",
    reason: /is pending-upgrade at revision 3 .*recover with: helm rollback web 2 --namespace apps — then re-run khook/,
  },
  {
    rule: "pending-install -> pending, with the uninstall",
    facts: { ...base, history: [rev(1, "pending-install")] },
    expect: "pending",
    reason: /recover with: helm uninstall web --namespace apps/,
  },
  {
    rule: "pending-rollback -> pending, even with skipIf: installed",
    facts: { ...base, skipIfInstalled: true, history: [rev(1, "deployed"), rev(2, "pending-rollback")] },
    expect: "pending",
  },
  {
    rule: "skipIf: installed and a release -> skip, before reading values or charts",
    facts: { ...base, skipIfInstalled: true, history: [rev(1, "failed")] },
    expect: "skip",
    reason: /^release web \(namespace apps\) is installed: revision 1 \(demo-1\.0\.0, failed\); skipIf: installed$/,
  },
  {
    rule: "skipIf: installed and no release -> install",
    facts: { ...base, skipIfInstalled: true, values: {}, desiredChart: chart },
    expect: "install",
  },
  {
    rule: "a release: the deployed values are read before the chart",
    facts: { ...base, history: [rev(1, "deployed")], values: {} },
    expect: "need deployedValues",
  },
  {
    rule: "a release, both values read: the chart is resolved",
    facts: { ...base, history: [rev(1, "deployed")], values: {}, deployedValues: {} },
    expect: "need desiredChart",
  },
  {
    rule: "deployed, same chart and values -> no-op",
    facts: deployed,
    expect: "no-op",
    reason: /^revision 2 \(demo-1\.0\.0, deployed\) is up to date \(same chart and values\)$/,
  },
  {
    rule: "values compare as data: key order does not matter",
    facts: { ...deployed, values: { b: [1, { c: 2, d: 3 }], a: 1 }, deployedValues: { a: 1, b: [1, { d: 3, c: 2 }] } },
    expect: "no-op",
  },
  {
    rule: "another chart version -> upgrade",
    facts: { ...deployed, desiredChart: { name: "demo", version: "1.1.0" } },
    expect: "upgrade",
    reason: /^revision 2 \(demo-1\.0\.0, deployed\) -> demo@1\.1\.0$/,
  },
  {
    rule: "other values -> upgrade (values changed)",
    facts: { ...deployed, values: { a: 2 } },
    expect: "upgrade",
    reason: / \(values changed\)$/,
  },
  {
    rule: "a null value is a value: it differs from an absent key",
    facts: { ...deployed, values: { a: 1, b: null } },
    expect: "upgrade",
    reason: / \(values changed\)$/,
  },
  {
    rule: "the last revision failed -> upgrade, saying so",
    facts: { ...deployed, history: [rev(1, "deployed"), rev(2, "failed")] },
    expect: "upgrade",
    reason: / \(the last revision failed\)$/,
  },
  {
    rule: "the last revision superseded (a rollback elsewhere) -> upgrade",
    facts: { ...deployed, history: [rev(1, "superseded")] },
    expect: "upgrade",
    reason: /^revision 1 \(demo-1\.0\.0, superseded\) -> demo@1\.0\.0$/,
  },
  {
    rule: "a spec with hooks: the release's hooks label is checked",
    facts: { ...deployed, specHasHooks: true },
    expect: "need hooksMatch",
  },
  {
    rule: "the release carries other render hooks -> upgrade (hooks changed)",
    facts: { ...deployed, specHasHooks: true, hooksMatch: false },
    expect: "upgrade",
    reason: / \(hooks changed\)$/,
  },
  {
    rule: "the same render hooks -> no-op",
    facts: { ...deployed, specHasHooks: true, hooksMatch: true },
    expect: "no-op",
  },
  {
    rule: "a spec without hooks never asks for the hooks label",
    facts: { ...deployed, hooksMatch: false },
    expect: "no-op",
  },
  {
    rule: "a local chart: the deployed manifest is compared with a dry run",
    facts: { ...deployed, localChart: true },
    expect: "need manifests",
  },
  {
    rule: "a local chart whose content changed -> upgrade (chart content changed)",
    facts: { ...deployed, localChart: true, manifests: { deployed: "a: 1\n", rendered: "a: 2\n" } },
    expect: "upgrade",
    reason: / \(chart content changed\)$/,
  },
  {
    rule: "a local chart rendering the same manifest (helm's trailing newline aside) -> no-op",
    facts: { ...deployed, localChart: true, manifests: { deployed: "a: 1\n\n", rendered: "a: 1" } },
    expect: "no-op",
  },
  {
    rule: "a changed chart is an upgrade without a dry run",
    facts: { ...deployed, localChart: true, desiredChart: { name: "demo", version: "2.0.0" } },
    expect: "upgrade",
  },
];

function shown(d: ReleaseDecisionOrNeed): string {
  return d.action === "need" ? `need ${d.fact}` : d.action;
}

describe("decideRelease: the install / upgrade / no-op / skip rule of a helm: step", () => {
  for (const c of cases) {
    test(c.rule, () => {
      const d = decideRelease(c.facts);
      assert.equal(shown(d), c.expect);
      if (c.reason !== undefined) assert.match(d.action === "need" ? "" : d.reason, c.reason);
    });
  }

  test("the decision carries what acting needs: the chart for an install or upgrade, the last revision otherwise", () => {
    const up = decideRelease({ ...deployed, values: { a: 2 } });
    assert.ok(up.action === "upgrade");
    assert.deepEqual([up.desired, up.last.revision], [chart, 2]);
    const noop = decideRelease(deployed);
    assert.ok(noop.action === "no-op");
    assert.equal(noop.last.revision, 2);
  });
});
