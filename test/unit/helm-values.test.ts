import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { Redactor } from "../../provider/redact.js";
import { mergeValues, sameValues } from "../../provider/helm/release-values.js";
import { computeValues, parseValuesText } from "../../provider/steps/helm/read-values.js";
import { tempSpecDir } from "./support/spec-files.js";

function ctx(
  baseDir: string,
  deadline = 60_000,
): { baseDir: string; signal: AbortSignal; redactor: Redactor; deadline: number } {
  return { baseDir, signal: new AbortController().signal, redactor: new Redactor(), deadline };
}

async function serve(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("helm values: deep merge like helm (maps merge, everything else replaces)", () => {
  test("maps merge recursively; the later layer wins on scalars", () => {
    const out = mergeValues({ a: { b: 1, c: 2 }, d: "x" }, { a: { c: 3, e: 4 }, d: "y" });
    assert.deepEqual(out, { a: { b: 1, c: 3, e: 4 }, d: "y" });
  });

  test("lists replace wholesale, they are not concatenated or merged by index", () => {
    assert.deepEqual(mergeValues({ l: [1, 2, 3] }, { l: [9] }), { l: [9] });
    assert.deepEqual(mergeValues({ l: [{ a: 1 }] }, { l: [{ b: 2 }] }), { l: [{ b: 2 }] });
  });

  test("a map replaces a scalar and a scalar replaces a map", () => {
    assert.deepEqual(mergeValues({ a: 1 }, { a: { b: 2 } }), { a: { b: 2 } });
    assert.deepEqual(mergeValues({ a: { b: 2 } }, { a: "s" }), { a: "s" });
  });

  test("null is kept, so helm removes the chart default for that key", () => {
    assert.deepEqual(mergeValues({ a: { b: 1 } }, { a: { b: null } }), { a: { b: null } });
  });

  test("the inputs are not modified", () => {
    const base = { a: { b: 1 } };
    const over = { a: { c: [1] } };
    const out = mergeValues(base, over);
    (out.a as { c: number[] }).c.push(2);
    assert.deepEqual(base, { a: { b: 1 } });
    assert.deepEqual(over, { a: { c: [1] } });
  });
});

describe("helm values: valuesFrom in order, then values", () => {
  test("later valuesFrom entries override earlier ones, and values: overrides them all", async () => {
    const dir = tempSpecDir({
      "values/one.yaml": "replicas: 1\nimage: { tag: a, repo: r }\nlist: [1, 2]\n",
      "values/two.yaml": "replicas: 2\nimage: { tag: b }\n",
    });
    const out = await computeValues(
      {
        valuesFrom: [{ file: "./values/one.yaml" }, { file: "./values/two.yaml" }],
        values: { image: { tag: "c" }, extra: true },
      },
      ctx(dir),
    );
    assert.deepEqual(out, { replicas: 2, image: { tag: "c", repo: "r" }, list: [1, 2], extra: true });
  });

  test("relative file paths resolve against the spec's directory", async () => {
    const dir = tempSpecDir({ "sub/v.yaml": "a: 1\n" });
    assert.deepEqual(await computeValues({ valuesFrom: [{ file: "./sub/v.yaml" }] }, ctx(dir)), { a: 1 });
  });

  test("values files are read like helm reads them: YAML 1.1 booleans, an empty file is no values", async () => {
    assert.deepEqual(parseValuesText("a: yes\nb: off\nc: 'yes'\n", "v.yaml", new Redactor()), {
      a: true,
      b: false,
      c: "yes",
    });
    assert.deepEqual(parseValuesText("# only a comment\n", "v.yaml", new Redactor()), {});
  });

  test("a values file that is not a mapping is an error naming the file", () => {
    assert.throws(
      () => parseValuesText("- a\n- b\n", "./v.yaml", new Redactor()),
      /values from \.\/v\.yaml must be a mapping/,
    );
    assert.throws(() => parseValuesText("a: [\n", "./v.yaml", new Redactor()), /not valid YAML/);
  });

  test("a missing values file is an error naming it as written", async () => {
    const dir = tempSpecDir({});
    await assert.rejects(
      computeValues({ valuesFrom: [{ file: "./nope.yaml" }] }, ctx(dir)),
      /cannot read values file \.\/nope\.yaml .*ENOENT/,
    );
  });

  test("url: sources are fetched, with URL userinfo sent as basic auth and never shown", async () => {
    let seenAuth: string | undefined;
    const srv = await serve((req, res) => {
      seenAuth = req.headers.authorization;
      if (req.headers.authorization !== `Basic ${Buffer.from("u:p4ss word").toString("base64")}`) {
        res.writeHead(401).end();
        return;
      }
      res.end("fromUrl: 1\nshared: url\n");
    });
    try {
      const base = srv.url.replace("http://", "http://u:p4ss%20word@");
      const out = await computeValues(
        { valuesFrom: [{ url: `${base}/v.yaml` }], values: { shared: "inline" } },
        ctx(tempSpecDir({})),
      );
      assert.deepEqual(out, { fromUrl: 1, shared: "inline" });
      assert.ok(seenAuth?.startsWith("Basic "));
      const wrong = srv.url.replace("http://", "http://u:wrongpass@");
      await assert.rejects(
        computeValues({ valuesFrom: [{ url: `${wrong}/v.yaml` }] }, ctx(tempSpecDir({}))),
        (e: Error) => {
          assert.match(e.message, /HTTP 401/);
          assert.doesNotMatch(e.message, /wrongpass/);
          return true;
        },
      );
    } finally {
      await srv.close();
    }
  });

  test("url: sources are fetched with a timeout, bounded by the step's deadline", async () => {
    const srv = await serve(() => {
      // never answers
    });
    try {
      await assert.rejects(
        computeValues({ valuesFrom: [{ url: `${srv.url}/slow.yaml` }] }, ctx(tempSpecDir({}), 300)),
        /no answer within/,
      );
    } finally {
      await srv.close();
    }
  });
});

describe("helm values: comparison with a release's user-supplied values", () => {
  test("key order does not matter; helm's `null` for no values equals an empty map", () => {
    assert.ok(sameValues({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }));
    assert.ok(sameValues(null, {}));
    assert.ok(!sameValues({ a: 1 }, { a: "1" }));
    assert.ok(!sameValues({ l: [1, 2] }, { l: [2, 1] }));
  });
});
