// `npm run toolchain` / `./dev toolchain`: build (or verify) the test toolchain.
//   toolchain [--only etcd,kubernetes,...] [--force] [--list] [--env]
//   --list   print every tool, its version, directory, whether cached and its build time
//   --env    print `export PATH=...` putting the tools first
import path from "node:path";
import { LATE_TOOLS, defaultUnits, describeToolchain, ensureToolchain, toolBinDirs, unitIds } from "./toolchain";

async function main(argv: string[]): Promise<number> {
  let only: string[] | undefined;
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--only") only = (argv[++i] ?? "").split(",").filter(Boolean);
    else if (a.startsWith("--only=")) only = a.slice(7).split(",").filter(Boolean);
    else if (a === "--force") force = true;
    else if (a === "--list") {
      for (const t of describeToolchain()) {
        const time = t.seconds === undefined ? "" : `  (built in ${t.seconds}s)`;
        console.log(`${t.cached ? "cached " : "missing"}  ${`${t.id}-${t.version}`.padEnd(22)} ${t.dir}${time}`);
      }
      return 0;
    } else if (a === "--env") {
      console.log(`export PATH="${[...toolBinDirs(), process.env["PATH"] ?? ""].join(path.delimiter)}"`);
      return 0;
    } else if (a === "--help" || a === "-h") {
      console.log(`usage: toolchain [--only ${unitIds().join(",")}] [--force] [--list] [--env]`);
      return 0;
    } else {
      console.error(`toolchain: unknown argument ${a}`);
      return 2;
    }
  }
  const external = Boolean(process.env["KHOOK_TEST_KUBECONFIG"]);
  // Without --only: everything `./dev test` builds, the late tools included.
  const res = await ensureToolchain({ only: only ?? [...defaultUnits(external), ...LATE_TOOLS], force });
  for (const b of res.built) console.log(`built   ${b.id}-${b.version} in ${b.seconds}s`);
  for (const c of res.cached) console.log(`cached  ${c.id}-${c.version}`);
  console.log(`\nexport PATH="${[...res.binDirs, "$PATH"].join(path.delimiter)}"`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
