/** sprig's defaults, JSON and reflection functions. */
import { def, isEmpty } from "../conv.js";
import { marshal, unmarshal } from "../gojson.js";
import {
  deepEqual,
  type FuncDef,
  GoCallError,
  type GoValue,
  kindOf,
  T_ANY,
  T_BOOL,
  T_STRING,
  typeString,
} from "../values.js";

const A = T_ANY;
const S = T_STRING;

function toJsonLax(v: GoValue, indent = ""): string {
  try {
    return marshal(v, true, indent);
  } catch (e) {
    if (e instanceof GoCallError) return "";
    throw e;
  }
}

export const defaultFunctions: Record<string, FuncDef> = {
  default: def([A], ([d, ...given]) => (given.length === 0 || isEmpty(given[0]!) ? d! : given[0]!), A),
  empty: def([A], ([v]) => isEmpty(v!)),
  coalesce: def([], (vs) => vs.find((v) => !isEmpty(v)) ?? null, A),
  all: def([], (vs) => vs.every((v) => !isEmpty(v)), A),
  any: def([], (vs) => vs.some((v) => !isEmpty(v)), A),
  fromJson: def([S], ([s]) => unmarshal(s as string).value),
  mustFromJson: def([S], ([s]) => {
    const r = unmarshal(s as string);
    if (r.error) throw new GoCallError(r.error);
    return r.value;
  }),
  toJson: def([A], ([v]) => toJsonLax(v!)),
  mustToJson: def([A], ([v]) => marshal(v!, true)),
  toPrettyJson: def([A], ([v]) => toJsonLax(v!, "  ")),
  mustToPrettyJson: def([A], ([v]) => marshal(v!, true, "  ")),
  toRawJson: def([A], ([v]) => marshal(v!, false)),
  mustToRawJson: def([A], ([v]) => marshal(v!, false)),
  ternary: def([A, A, T_BOOL], ([vt, vf, v]) => (v ? vt! : vf!)),
  typeOf: def([A], ([v]) => typeString(v!)),
  typeIs: def([S, A], ([t, v]) => t === typeString(v!)),
  typeIsLike: def([S, A], ([t, v]) => {
    const ts = typeString(v!);
    return t === ts || "*" + (t as string) === ts;
  }),
  kindOf: def([A], ([v]) => kindOf(v!)),
  kindIs: def([S, A], ([t, v]) => t === kindOf(v!)),
  deepEqual: def([A, A], ([a, b]) => deepEqual(a!, b!)),
};
