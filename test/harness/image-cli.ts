// `./dev image REFERENCE [--plain-http]`: builds khook's OCI image (image.ts) from the single
// executable and the pinned tools (built first when missing) and pushes it; prints digest, sizes
// and layers. Registry credentials: KHOOK_IMAGE_USERNAME and KHOOK_IMAGE_PASSWORD.
import { buildImage } from "./image";
import { ensureSea } from "./sea";
import { ensureToolchain } from "./toolchain";

async function main(argv: string[]): Promise<number> {
  const reference = argv.find((a) => !a.startsWith("-"));
  if (reference === undefined || argv.some((a) => a.startsWith("-") && a !== "--plain-http")) {
    process.stderr.write("usage: ./dev image REGISTRY/REPOSITORY:TAG [--plain-http]\n");
    return 2;
  }
  const log = (s: string) => process.stderr.write(`${s}\n`);
  await ensureToolchain({ only: ["helm", "kustomize", "khook-image"], log });
  await ensureSea(log);
  const username = process.env["KHOOK_IMAGE_USERNAME"];
  const image = await buildImage(reference, {
    plainHttp: argv.includes("--plain-http"),
    ...(username !== undefined ? { login: { username, password: process.env["KHOOK_IMAGE_PASSWORD"] ?? "" } } : {}),
  });
  process.stdout.write(`${JSON.stringify(image, null, 2)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`khook image: ${(e as Error).message}\n`);
    process.exitCode = 1;
  },
);
