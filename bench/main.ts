/** `npm run bench [offline|engine|pulumi ...]`: prints figures; never asserts. */
import { benchOffline } from "./offline.js";
import { benchStartup } from "./startup.js";

type Bench = () => Promise<void>;

async function loadBenches(): Promise<Record<string, Bench>> {
  const benches: Record<string, Bench> = { startup: benchStartup, offline: benchOffline };
  for (const [name, mod, fn] of [
    ["engine", "./engine.js", "benchEngine"],
    ["bootstrap", "./bootstrap.js", "benchBootstrap"],
    ["scale", "./scale.js", "benchScale"],
    ["pulumi", "./pulumi.js", "benchPulumi"],
    ["hooks", "./hooks.js", "benchHooks"],
    ["image", "./image.js", "benchImage"],
    ["races", "./races.js", "benchRaces"],
    ["drift", "./drift.js", "benchDrift"],
    ["unanswered", "./unanswered.js", "benchUnanswered"],
  ] as const) {
    try {
      const m = require(mod) as Record<string, Bench>;
      if (typeof m[fn] === "function") benches[name] = m[fn];
    } catch (e) {
      // Only a benchmark that is not part of this build is optional; a broken one must fail loudly.
      if (
        (e as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND" ||
        !String((e as Error).message).includes(mod.slice(2))
      )
        throw e;
    }
  }
  return benches;
}

async function main(): Promise<void> {
  const benches = await loadBenches();
  const wanted = process.argv.slice(2);
  const names = wanted.length > 0 ? wanted : Object.keys(benches);
  for (const name of names) {
    const bench = benches[name];
    if (bench === undefined) {
      console.error(`unknown benchmark "${name}"; available: ${Object.keys(benches).join(", ")}`);
      process.exitCode = 2;
      return;
    }
    await bench();
    console.log("");
  }
}

void main();
