import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  evaluateJsonPath,
  formatJsonPathValue,
  isNonEmptyValue,
  parseJsonPath,
  type JsonPathExpr,
} from "../../provider/kubectl/jsonpath.js";

function expr(text: string): JsonPathExpr {
  const p = parseJsonPath(text);
  if (!p.ok) throw new Error(`parse failed for ${text}: ${p.message}`);
  return p.expr;
}

function run(text: string, data: unknown): unknown[] {
  return evaluateJsonPath(expr(text), data);
}

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web-0",
    labels: { app: "web", "app.kubernetes.io/name": "web" },
    annotations: { "kubernetes.io/psp": "restricted" },
  },
  spec: {
    containers: [
      { name: "app", image: "nginx:1.25", ports: [{ containerPort: 80 }, { containerPort: 443 }] },
      { name: "sidecar", image: "envoy:1.30", ports: [{ containerPort: 15000 }] },
    ],
  },
  status: {
    phase: "Running",
    readyReplicas: 2,
    ratio: 1.5,
    empty: "",
    nothing: null,
    conditions: [
      { type: "Initialized", status: "True" },
      { type: "Ready", status: "False", reason: "ContainersNotReady" },
      { type: "PodScheduled", status: "True", priority: 3 },
    ],
  },
};

describe("jsonpath: relaxed syntax", () => {
  for (const form of ["{.status.phase}", ".status.phase", "status.phase", "{status.phase}"]) {
    test(`${JSON.stringify(form)} is {.status.phase}`, () => {
      assert.equal(expr(form).source, "{.status.phase}");
      assert.deepEqual(run(form, pod), ["Running"]);
    });
  }
  test("nothing may surround the braces (kubectl's pattern)", () => {
    for (const form of [" {.status.phase}", "{.status.phase} ", "{.a}{.b}"])
      assert.equal(parseJsonPath(form).ok, false, form);
  });
  test("an empty field name can never match, so it is rejected: kubectl reads {$.a} as {.$.a}", () => {
    for (const form of ["{$.status.phase}", "{@.status.phase}", "{.status.phase.}", "{ .status.phase }"]) {
      const p = parseJsonPath(form);
      assert.equal(p.ok, false, form);
      if (!p.ok) assert.match(p.message, /empty field name/, form);
    }
  });
  test("{.} and . are kubectl's {..}: every node with children", () => {
    assert.equal(expr("{.}").source, "{..}");
    assert.deepEqual(run(".", pod)[0], pod);
  });
  test("errors name the problem", () => {
    for (const [bad, why] of [
      ["", /empty/],
      ["{.a}{.b}", /single expression/],
      ["{.a", /not a jsonpath expression/],
      ['{.a[?(@.b=="c")}', /filter|unclosed|unterminated/],
      ["{.a[x]}", /invalid array index/],
      ["{.a[1:2:0]}", /step/],
      ["{.a b}", /identifier/],
    ] as const) {
      const p = parseJsonPath(bad);
      assert.equal(p.ok, false, `expected ${bad} to be rejected`);
      if (!p.ok) assert.match(p.message, why, bad);
    }
  });
});

describe("jsonpath: fields", () => {
  test("nested fields", () => assert.deepEqual(run("{.metadata.name}", pod), ["web-0"]));
  test("numbers, floats, booleans keep their type", () => {
    assert.deepEqual(run("{.status.readyReplicas}", pod), [2]);
    assert.deepEqual(run("{.status.ratio}", pod), [1.5]);
  });
  test("a map or list value is yielded whole", () => {
    assert.deepEqual(run("{.metadata.labels}", pod), [pod.metadata.labels]);
    assert.deepEqual(run("{.spec.containers}", pod), [pod.spec.containers]);
  });
  test("escaped dots reach dotted keys; a bracket key's dots still separate fields, as in client-go", () => {
    assert.deepEqual(run("{.metadata.labels.app\\.kubernetes\\.io/name}", pod), ["web"]);
    assert.deepEqual(run("{.metadata.annotations.kubernetes\\.io/psp}", pod), ["restricted"]);
    assert.deepEqual(run("{.metadata.labels['app']}", pod), ["web"]);
    assert.deepEqual(run("{.metadata.labels['app.kubernetes.io/name']}", pod), []);
  });
  test("null and empty values are yielded (existence is decided by the caller)", () => {
    assert.deepEqual(run("{.status.nothing}", pod), [null]);
    assert.deepEqual(run("{.status.empty}", pod), [""]);
  });
});

describe("jsonpath: missing paths yield nothing, never an error", () => {
  const cases = [
    "{.status.notThere}",
    "{.nope.deeper.still}",
    "{.status.phase.length}",
    "{.spec.containers.name}",
    "{.spec.containers[5].name}",
    "{.spec.containers[-9]}",
    "{.spec.containers[3:4]}",
    '{.status.conditions[?(@.type=="Missing")].status}',
    "{.status.phase[0]}",
    "{.status.phase[?(@.x)]}",
    "{..nope}",
    "{.metadata.labels['nope']}",
  ];
  for (const c of cases) test(c, () => assert.deepEqual(run(c, pod), []));
  test("on null, arrays, and scalars as the document", () => {
    for (const doc of [null, undefined, [], "x", 3, {}]) assert.deepEqual(run("{.status.phase}", doc), []);
  });
});

describe("jsonpath: arrays", () => {
  test("index, negative index", () => {
    assert.deepEqual(run("{.spec.containers[0].name}", pod), ["app"]);
    assert.deepEqual(run("{.spec.containers[1].name}", pod), ["sidecar"]);
    assert.deepEqual(run("{.spec.containers[-1].name}", pod), ["sidecar"]);
    assert.deepEqual(run("{.spec.containers[-2].name}", pod), ["app"]);
  });
  test("wildcards", () => {
    assert.deepEqual(run("{.spec.containers[*].name}", pod), ["app", "sidecar"]);
    assert.deepEqual(run("{.spec.containers[*].ports[*].containerPort}", pod), [80, 443, 15000]);
    assert.deepEqual(run("{.metadata.labels.*}", pod), ["web", "web"]);
  });
  test("slices", () => {
    const d = { a: [0, 1, 2, 3, 4, 5] };
    assert.deepEqual(run("{.a[1:3]}", d), [1, 2]);
    assert.deepEqual(run("{.a[:2]}", d), [0, 1]);
    assert.deepEqual(run("{.a[4:]}", d), [4, 5]);
    assert.deepEqual(run("{.a[-2:]}", d), [4, 5]);
    assert.deepEqual(run("{.a[::2]}", d), [0, 2, 4]);
    assert.deepEqual(run("{.a[1:6:2]}", d), [1, 3, 5]);
    assert.deepEqual(run("{.a[2:2]}", d), []);
    assert.deepEqual(run("{.a[0:10]}", d), []);
  });
  test("unions of indexes and keys", () => {
    assert.deepEqual(run("{.spec.containers[0,1].image}", pod), ["nginx:1.25", "envoy:1.30"]);
    assert.deepEqual(run("{.metadata['name','namespace']}", pod), ["web-0"]);
    assert.deepEqual(run("{.status['phase','readyReplicas']}", pod), ["Running", 2]);
  });
});

describe("jsonpath: recursive descent", () => {
  test("..name finds every name in document order", () => {
    assert.deepEqual(run("{..name}", pod), ["web-0", "app", "sidecar"]);
  });
  test("..containerPort", () => assert.deepEqual(run("{..containerPort}", pod), [80, 443, 15000]));
  test("..[*] style wildcard after ..", () => {
    const d = { a: { b: 1 } };
    assert.deepEqual(run("{..b}", d), [1]);
  });
  test("double recursion is rejected", () => assert.equal(parseJsonPath("{....a}").ok, false));
});

describe("jsonpath: filters", () => {
  test("equality on strings", () => {
    assert.deepEqual(run('{.status.conditions[?(@.type=="Ready")].status}', pod), ["False"]);
    assert.deepEqual(run("{.status.conditions[?(@.type=='Ready')].reason}", pod), ["ContainersNotReady"]);
    assert.deepEqual(run('{.status.conditions[?(@.type == "Ready")].status}', pod), ["False"]);
  });
  test("inequality", () => {
    assert.deepEqual(run('{.status.conditions[?(@.status!="True")].type}', pod), ["Ready"]);
  });
  test("existence", () => {
    assert.deepEqual(run("{.status.conditions[?(@.reason)].type}", pod), ["Ready"]);
    assert.deepEqual(run("{.status.conditions[?(@.priority)].type}", pod), ["PodScheduled"]);
  });
  test("numeric comparisons", () => {
    const d = {
      items: [
        { n: "a", v: 1 },
        { n: "b", v: 5 },
        { n: "c", v: 10 },
      ],
    };
    assert.deepEqual(run("{.items[?(@.v>4)].n}", d), ["b", "c"]);
    assert.deepEqual(run("{.items[?(@.v>=5)].n}", d), ["b", "c"]);
    assert.deepEqual(run("{.items[?(@.v<5)].n}", d), ["a"]);
    assert.deepEqual(run("{.items[?(@.v<=5)].n}", d), ["a", "b"]);
    assert.deepEqual(run("{.items[?(@.v==10)].n}", d), ["c"]);
    const f = {
      items: [
        { n: "a", v: 1.5 },
        { n: "b", v: 2.5 },
      ],
    };
    assert.deepEqual(run("{.items[?(@.v>2.0)].n}", f), ["b"]);
  });
  test("comparing different types is client-go's error, so the whole expression yields nothing", () => {
    const d = { items: [{ v: 1 }, { v: "1" }] };
    assert.deepEqual(run('{.items[?(@.v=="1")].v}', d), []);
    assert.deepEqual(run("{.items[?(@.v==1)].v}", d), []);
    // an int64 in the document against a decimal literal
    assert.deepEqual(run("{.items[?(@.v>0.5)].v}", { items: [{ v: 1 }] }), []);
  });
  test("booleans", () => {
    const d = {
      items: [
        { n: "x", ok: true },
        { n: "y", ok: false },
      ],
    };
    assert.deepEqual(run("{.items[?(@.ok==true)].n}", d), ["x"]);
    assert.deepEqual(run("{.items[?(@.ok!=true)].n}", d), ["y"]);
  });
  test("nested paths inside a filter", () => {
    const d = {
      items: [
        { metadata: { name: "a", labels: { tier: "db" } } },
        { metadata: { name: "b", labels: { tier: "web" } } },
      ],
    };
    assert.deepEqual(run('{.items[?(@.metadata.labels.tier=="web")].metadata.name}', d), ["b"]);
  });
  test("quoted values with spaces, parentheses and operators", () => {
    const d = {
      items: [
        { m: "a (b) == c", v: 1 },
        { m: "x", v: 2 },
      ],
    };
    assert.deepEqual(run('{.items[?(@.m=="a (b) == c")].v}', d), [1]);
  });
});

describe("jsonpath: value helpers", () => {
  test("formatting like fmt %v", () => {
    assert.equal(formatJsonPathValue(2), "2");
    assert.equal(formatJsonPathValue(1.5), "1.5");
    assert.equal(formatJsonPathValue(true), "true");
    assert.equal(formatJsonPathValue("x"), "x");
    assert.equal(formatJsonPathValue(null), "<nil>");
    assert.equal(formatJsonPathValue(0.000001), "1e-06");
    assert.equal(formatJsonPathValue(1234567.5), "1.2345675e+06");
    assert.equal(formatJsonPathValue(1e21), "1e+21");
    assert.equal(formatJsonPathValue(12345678901), "12345678901");
  });
  test("non-empty values", () => {
    for (const v of ["a", 0, false, [1], { a: 1 }]) assert.equal(isNonEmptyValue(v), true, JSON.stringify(v));
    for (const v of ["", null, undefined, [], {}]) assert.equal(isNonEmptyValue(v), false, JSON.stringify(v));
  });
});

describe("jsonpath: properties", () => {
  const key = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_-]{0,8}$/);
  test("a field path finds exactly the value placed there", () => {
    fc.assert(
      fc.property(
        fc.array(key, { minLength: 1, maxLength: 5 }),
        fc.oneof(fc.string(), fc.integer(), fc.boolean()),
        (path, leaf) => {
          let doc: unknown = leaf;
          for (const k of [...path].reverse()) doc = { [k]: doc };
          assert.deepEqual(run(`{.${path.join(".")}}`, doc), [leaf]);
          assert.deepEqual(run(path.join("."), doc), [leaf]);
        },
      ),
    );
  });
  test("evaluation never throws on arbitrary JSON", () => {
    const exprs = [
      "{.a.b}",
      "{.a[*].b}",
      "{..b}",
      '{.a[?(@.b=="x")].c}',
      "{.a[-1:]}",
      "{.a['b','c']}",
      "{.a[?(@.b>1)]}",
    ].map(expr);
    fc.assert(
      fc.property(fc.jsonValue(), (doc) => {
        for (const e of exprs) assert.ok(Array.isArray(evaluateJsonPath(e, doc)));
      }),
    );
  });
  test("[*] yields every element, in order", () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), (xs) => {
        assert.deepEqual(run("{.a[*]}", { a: xs }), xs);
        assert.deepEqual(run("{.a[0:]}", { a: xs }), xs.length ? xs : []);
      }),
    );
  });
});
