// `npm run cluster:up` / `cluster:down` (./dev cluster-up / cluster-down): a local test cluster
// for humans and the demo. It keeps running after `up` returns, until `down`.
//   cluster-cli up [--nodes N]   build what is missing, start (or reuse) the cluster, print exports
//   cluster-cli down             stop it and delete its state
//   cluster-cli status           print whether it runs, and its kubeconfig
// Each takes [--name NAME]; without it, the cluster is this checkout's own (dev-cluster.ts).
import fs from "node:fs";
import { clusterAlive, clusterDir, componentLogs, readClusterState, startCluster, stopCluster } from "./cluster";
import { devClusterName } from "./dev-cluster";
import { toolPathVar } from "./env";
import { CLIENT_TOOLS, CONTROL_PLANE, LAB_TOOLS, ensureToolchain } from "./toolchain";

function printExports(kubeconfig: string, logsDir: string): void {
  console.log(`\n# khook test cluster is up. Logs: ${logsDir}`);
  console.log(`export KUBECONFIG=${kubeconfig}`);
  console.log(`export KHOOK_TEST_KUBECONFIG=${kubeconfig}`);
  console.log(`export PATH="${toolPathVar()}"`);
}

async function main(argv: string[]): Promise<number> {
  const cmd = argv[0] ?? "status";
  const dir = clusterDir(devClusterName(argv));
  switch (cmd) {
    case "up": {
      const ni = argv.indexOf("--nodes");
      const nodes = ni >= 0 ? Number(argv[ni + 1]) : 1;
      await ensureToolchain({ only: [...CONTROL_PLANE, ...CLIENT_TOOLS] });
      // The real operators the lab runs behind kwok's pods: without them the cluster still runs, and
      // a pod of their images waits with the reason (the launcher says what to build).
      await ensureToolchain({ only: LAB_TOOLS }).catch((e: Error) =>
        console.error(`khook cluster: the lab's operators are not built: ${e.message.split("\n")[0]}`),
      );
      const s = readClusterState(dir);
      if (s && clusterAlive(s)) {
        console.error(`khook cluster: already running (${dir})`);
        printExports(s.kubeconfig, s.logsDir);
        return 0;
      }
      const st = await startCluster({ dir, nodes, log: (l) => console.error(l) });
      printExports(st.kubeconfig, st.logsDir);
      return 0;
    }
    case "down": {
      const s = readClusterState(dir);
      if (!s) {
        console.error("khook cluster: not running");
        return 0;
      }
      await stopCluster(dir);
      fs.rmSync(dir, { recursive: true, force: true });
      console.error("khook cluster: stopped");
      return 0;
    }
    case "status": {
      const s = readClusterState(dir);
      if (!s) {
        console.log("khook cluster: not running");
        return 1;
      }
      const alive = clusterAlive(s);
      console.log(`khook cluster: ${alive ? "running" : "DEGRADED (some components exited)"} in ${dir}`);
      console.log(`export KUBECONFIG=${s.kubeconfig}`);
      if (!alive) console.log(componentLogs(s, 20));
      return alive ? 0 : 1;
    }
    default:
      console.error("usage: cluster-cli up [--nodes N] [--name NAME] | down [--name NAME] | status [--name NAME]");
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
