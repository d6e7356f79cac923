/**
 * khook's OCI image (test/harness/image.ts): built from the single executable and pushed to a
 * local registry (distribution, on loopback); its digest, what a pull transfers (the compressed
 * layers), the unpacked root filesystem and each layer. Figures, not assertions.
 */
import { buildImage } from "../test/harness/image.js";
import { startOciRegistry } from "../test/harness/fixtures.js";
import { ensureSea } from "../test/harness/sea.js";
import { ensureToolchain } from "../test/harness/toolchain.js";

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

export async function benchImage(): Promise<void> {
  await ensureToolchain({ only: ["helm", "kustomize", "registry", "khook-image"] });
  await ensureSea(() => undefined);
  const registry = await startOciRegistry({ username: "bench", password: "bench-only", push: false });
  try {
    const t0 = Date.now();
    const image = await buildImage(`${registry.host}/khook:bench`, {
      login: { username: registry.username, password: registry.password },
      plainHttp: true,
    });
    console.log(
      `== image: assembled and pushed without a container runtime in ${((Date.now() - t0) / 1000).toFixed(1)}s ==`,
    );
    console.log(`  digest ${image.digest}`);
    console.log(`  pull size ${mb(image.compressedSize)} (compressed layers), root filesystem ${mb(image.rootfsSize)}`);
    for (const l of image.layers) console.log(`  layer ${l.name.padEnd(8)} ${mb(l.size).padStart(9)}  ${l.digest}`);
    console.log(`  Debian packages: ${image.debs.join(", ")}`);
  } finally {
    await registry.close();
  }
}
