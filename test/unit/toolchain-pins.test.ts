/**
 * The toolchain's version constants (test/harness/toolchain.ts) name what the Go wrapper modules
 * under scripts/toolchain/ actually require: a bump of one without the other would build a tool
 * whose version the docs, the stamps and `pulumi plugin ls` misreport.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import {
  CERT_MANAGER_VERSION,
  GGCR_VERSION,
  PULUMI_DOTNET_PKG_VERSION,
  PULUMI_DOTNET_VERSION,
  PULUMI_KUBERNETES_MODULE_VERSION,
  PULUMI_VERSION,
} from "../harness/toolchain.js";
import { repoRoot } from "../harness/util.js";

/** The version a wrapper's go.mod requires of `module` (direct or indirect), or undefined. */
function required(wrapper: string, module: string): string | undefined {
  const goMod = fs.readFileSync(path.join(repoRoot(), "scripts", "toolchain", wrapper, "go.mod"), "utf8");
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return new RegExp(`^\\s*(?:require\\s+)?${escaped} (v\\S+)`, "m").exec(goMod)?.[1];
}

test("each Go wrapper requires the version its toolchain constant names", () => {
  const pins: [wrapper: string, module: string, expected: string][] = [
    ["pulumi", "github.com/pulumi/pulumi/sdk/v3", `v${PULUMI_VERSION}`],
    ["pulumi", "github.com/pulumi/pulumi/pkg/v3", `v${PULUMI_VERSION}`],
    ["pulumi-sdkgen", "github.com/pulumi/pulumi/pkg/v3", `v${PULUMI_VERSION}`],
    ["pulumi-sdkgen/dotnet", "github.com/pulumi/pulumi/pkg/v3", `v${PULUMI_DOTNET_PKG_VERSION}`],
    ["pulumi-sdkgen/dotnet", "github.com/pulumi/pulumi/sdk/v3", `v${PULUMI_DOTNET_PKG_VERSION}`],
    ["pulumi-sdkgen/dotnet", "github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3", `v${PULUMI_DOTNET_VERSION}`],
    ["pulumi-kubernetes", "github.com/pulumi/pulumi-kubernetes/provider/v4", PULUMI_KUBERNETES_MODULE_VERSION],
    ["khook-image", "github.com/google/go-containerregistry", `v${GGCR_VERSION}`],
    ["cert-manager", "github.com/cert-manager/cert-manager", `v${CERT_MANAGER_VERSION}`],
  ];
  for (const [wrapper, module, expected] of pins) {
    assert.equal(required(wrapper, module), expected, `scripts/toolchain/${wrapper}/go.mod requires ${module}`);
  }
});
