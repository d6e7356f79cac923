/**
 * Which container images the lab's launcher runs for real, and what each binary needs to run as a
 * host process instead of in a container: where it listens (so every listener moves to a free
 * loopback port the egress proxy forwards `podIP:containerPort` to) and how it is given a
 * kubeconfig. An image is matched by its repository's last path segment, so any registry, mirror,
 * release name or tag runs the same binary. kwok's stages (kwok/stages.yaml) leave these images'
 * pods to the launcher; test/unit/lab-launch.test.ts holds the two lists equal.
 */

/** A flag a binary listens on. */
export interface Listener {
  flag: string;
  /** `port`: the flag takes a port; `hostport`: `host:port` (the host becomes 127.0.0.1). */
  form: "port" | "hostport";
  /** The port the binary listens on when the flag is absent. */
  defaultPort: number;
}

export interface LabImage {
  /** The repository's last path segment: `quay.io/jetstack/cert-manager-webhook:v1.21.2` → `cert-manager-webhook`. */
  image: string;
  /** The toolchain binary (test/harness/toolchain.ts) that runs for it. */
  tool: string;
  listeners: Listener[];
  /** Flags added so nothing listens beyond loopback where the binary allows it. */
  loopbackFlags?: string[];
  /**
   * The flags that take the pod's kubeconfig (default `--kubeconfig`): the in-cluster config's
   * token path cannot move to the host, so every client of the binary is pointed at the file.
   */
  kubeconfigFlags?: string[];
}

export const LAB_IMAGES: readonly LabImage[] = [
  {
    image: "cert-manager-controller",
    tool: "cert-manager-controller",
    listeners: [
      { flag: "--metrics-listen-address", form: "hostport", defaultPort: 9402 },
      { flag: "--internal-healthz-listen-address", form: "hostport", defaultPort: 9403 },
    ],
  },
  {
    // Listens on every interface (`:port`, not configurable): on a free port, forwarded from the pod's.
    image: "cert-manager-webhook",
    tool: "cert-manager-webhook",
    listeners: [
      { flag: "--secure-port", form: "port", defaultPort: 6443 },
      { flag: "--healthz-port", form: "port", defaultPort: 6080 },
      { flag: "--metrics-listen-address", form: "hostport", defaultPort: 9402 },
    ],
  },
  {
    image: "cert-manager-cainjector",
    tool: "cert-manager-cainjector",
    listeners: [{ flag: "--metrics-listen-address", form: "hostport", defaultPort: 9402 }],
  },
  {
    image: "cert-manager-startupapicheck",
    tool: "cert-manager-startupapicheck",
    listeners: [],
  },
  {
    image: "metrics-server",
    tool: "metrics-server",
    listeners: [{ flag: "--secure-port", form: "port", defaultPort: 10250 }],
    loopbackFlags: ["--bind-address=127.0.0.1"],
    // Its API server delegates authentication and authorization with clients of their own.
    kubeconfigFlags: ["--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig"],
  },
];

/** The repository's last path segment of an image reference (tag and digest dropped). */
export function imageName(ref: string): string {
  const noDigest = ref.split("@", 1)[0]!;
  const lastSlash = noDigest.lastIndexOf("/");
  const last = noDigest.slice(lastSlash + 1);
  const colon = last.indexOf(":");
  return colon < 0 ? last : last.slice(0, colon);
}

/** The lab image an image reference runs, if the launcher runs it. */
export function labImageFor(ref: string): LabImage | undefined {
  const name = imageName(ref);
  return LAB_IMAGES.find((i) => i.image === name);
}
