import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Redactor } from "../../provider/redact.js";
import { registerPreviousSecrets } from "../../provider/steps/helm/read-values.js";
import { maskSecretData } from "../../provider/steps/helm/masked-diff.js";

const secret = (name: string, data: string) =>
  `---\n# Source: c/templates/s.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\ndata:\n${data}`;
const cm = `---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: "1"\n`;

describe("helm diff: Secret data is never shown", () => {
  test("unchanged keys become ***, changed keys *** (before) / *** (after); other objects are untouched", () => {
    const before = cm + secret("s", "  same: c2FtZQ==\n  changed: b2xk\n");
    const after = cm + secret("s", "  same: c2FtZQ==\n  changed: bmV3\n  added: eA==\n");
    const m = maskSecretData(before, after);
    assert.ok(m.before.startsWith(cm), "the ConfigMap is kept as written");
    assert.match(m.before, /same: "\*\*\*"\n {2}changed: "\*\*\* \(before\)"/);
    assert.match(m.after, /same: "\*\*\*"\n {2}changed: "\*\*\* \(after\)"\n {2}added: "\*\*\*"/);
    assert.ok(!/c2FtZQ|b2xk|bmV3|eA==/.test(m.before + m.after));
    assert.match(m.after, /^# Source: c\/templates\/s\.yaml$/m, "helm's source comment stays");
  });
});

describe("helm diff: a rotated secret's old value is masked too", () => {
  test("where the current values carry a secret, the deployed value at the same path is registered", () => {
    const r = new Redactor();
    r.add("new-secret-value");
    registerPreviousSecrets(
      r,
      { a: { token: "new-secret-value", plain: "x" }, l: ["new-secret-value"] },
      { a: { token: "old-secret-value", plain: "y" }, l: ["older-secret"] },
    );
    assert.equal(r.redact("old-secret-value older-secret y x"), "*** *** y x");
  });
});
