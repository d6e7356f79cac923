// node watchdog.js <parentPid> <clusterDir>
// Started detached next to a test cluster: when the test runner that owns the cluster dies
// without tearing it down (SIGKILL, CI timeout, crash), this stops the cluster so no process
// is left behind. Exits on its own once the cluster is stopped by someone else.
import { readClusterState, stopCluster } from "./cluster";
import { isAlive, sleep } from "./util";

async function main(): Promise<void> {
  const parent = Number(process.argv[2]);
  const dir = process.argv[3] ?? "";
  for (;;) {
    await sleep(1000);
    const s = readClusterState(dir);
    if (!s) return; // stopped normally
    if (!isAlive(parent)) {
      process.stderr.write(`khook watchdog: owner pid ${parent} is gone; stopping the cluster in ${dir}\n`);
      await stopCluster(dir);
      return;
    }
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`khook watchdog: ${e.message}\n`);
    process.exit(1);
  },
);
