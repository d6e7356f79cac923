// Which cluster `./dev cluster-up` / `cluster-down` / `status` mean. One per checkout by default,
// so `cluster-down` in one worktree never stops another worktree's cluster; `--name NAME` picks
// one explicitly (to share a cluster between checkouts, or to keep several).
import path from "node:path";
import { crc32 } from "node:zlib";
import { repoRoot } from "./util";

const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `dev-<checkout directory name>-<hash of its path>`, or the value of `--name`. Throws on a bad name. */
export function devClusterName(argv: readonly string[], checkout: string = repoRoot()): string {
  const at = argv.indexOf("--name");
  if (at >= 0) {
    const name = argv[at + 1];
    if (name === undefined || !NAME.test(name))
      throw new Error(
        `cluster-cli: --name needs a name of lowercase letters, digits and '-' (got ${JSON.stringify(name ?? "")})`,
      );
    return name;
  }
  const base =
    path
      .basename(checkout)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 30) || "checkout";
  return `dev-${base}-${crc32(path.resolve(checkout)).toString(16).padStart(8, "0")}`;
}
