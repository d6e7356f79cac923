/** The function map: text/template builtins + sprig's hermetic map minus khook's exclusions. */
import { type FuncDef, GoCallError, T_STRING } from "../values.js";
import { builtinFunctions } from "./builtins.js";
import { cryptoFunctions } from "./crypto.js";
import { dateFunctions } from "./date.js";
import { defaultFunctions } from "./defaulting.js";
import { dictFunctions } from "./dicts.js";
import { encodingFunctions } from "./encoding.js";
import { listFunctions } from "./lists.js";
import { mathFunctions } from "./math.js";
import { pathFunctions } from "./paths.js";
import { regexFunctions } from "./regex.js";
import { semverFunctions } from "./semver.js";
import { stringFunctions } from "./strings.js";
import { urlFunctions } from "./url.js";

/** sprig functions (hermetic map minus exclusions): exactly 179 names. */
const SPRIG_FUNCTIONS: Readonly<Record<string, FuncDef>> = {
  ...stringFunctions,
  ...mathFunctions,
  ...listFunctions,
  ...dictFunctions,
  ...defaultFunctions,
  ...encodingFunctions,
  ...cryptoFunctions,
  ...regexFunctions,
  ...semverFunctions,
  ...pathFunctions,
  ...urlFunctions,
  ...dateFunctions,
  fail: {
    params: [T_STRING],
    impl: ([msg]) => {
      throw new GoCallError(msg as string);
    },
  },
};

/** text/template builtins, minus `slice` (sprig's replaces it). */
const BUILTIN_FUNCTIONS: Readonly<Record<string, FuncDef>> = builtinFunctions;

const NOT_DETERMINISTIC = "it is not deterministic, and plan and apply must substitute identically";

/** Functions khook refuses, with the reason. */
export const EXCLUDED: ReadonlyMap<string, string> = new Map<string, string>([
  // sprig's non-hermetic functions
  ["date", NOT_DETERMINISTIC + " (it formats the current time or the local time zone)"],
  ["date_in_zone", NOT_DETERMINISTIC + " (it formats the current time)"],
  ["dateInZone", NOT_DETERMINISTIC + " (it formats the current time)"],
  ["date_modify", NOT_DETERMINISTIC + " (it depends on the current time)"],
  ["dateModify", NOT_DETERMINISTIC + " (it depends on the current time)"],
  ["now", NOT_DETERMINISTIC],
  ["htmlDate", NOT_DETERMINISTIC + " (it formats the current time or the local time zone)"],
  ["htmlDateInZone", NOT_DETERMINISTIC + " (it formats the current time)"],
  ["randAlphaNum", NOT_DETERMINISTIC + " (random)"],
  ["randAlpha", NOT_DETERMINISTIC + " (random)"],
  ["randAscii", NOT_DETERMINISTIC + " (random)"],
  ["randNumeric", NOT_DETERMINISTIC + " (random)"],
  ["randBytes", NOT_DETERMINISTIC + " (random)"],
  ["uuidv4", NOT_DETERMINISTIC + " (random)"],
  [
    "env",
    "it reads the process environment, which would bypass khook's KHOOK_VAR_ isolation; pass values as variables",
  ],
  [
    "expandenv",
    "it reads the process environment, which would bypass khook's KHOOK_VAR_ isolation; pass values as variables",
  ],
  ["getHostByName", "it performs network lookups; pipelines must be hermetic"],
  // sprig "hermetic" functions that are not deterministic
  ["randInt", NOT_DETERMINISTIC + " (random)"],
  ["shuffle", NOT_DETERMINISTIC + " (random)"],
  ["encryptAES", NOT_DETERMINISTIC + " (it uses a random IV)"],
  ["ago", NOT_DETERMINISTIC + " (it depends on the current time)"],
  ["toDate", NOT_DETERMINISTIC + " (it parses in the local time zone)"],
  ["mustToDate", NOT_DETERMINISTIC + " (it parses in the local time zone)"],
  // certificate and password generators
  ["bcrypt", NOT_DETERMINISTIC + " (random salt)"],
  ["htpasswd", NOT_DETERMINISTIC + " (random salt)"],
  ["genPrivateKey", NOT_DETERMINISTIC + " (it generates a random key)"],
  ["genCA", NOT_DETERMINISTIC + " (it generates a random key and certificate)"],
  ["genCAWithKey", NOT_DETERMINISTIC + " (it generates a certificate with a random serial and the current time)"],
  ["genSelfSignedCert", NOT_DETERMINISTIC + " (it generates a random key and certificate)"],
  [
    "genSelfSignedCertWithKey",
    NOT_DETERMINISTIC + " (it generates a certificate with a random serial and the current time)",
  ],
  ["genSignedCert", NOT_DETERMINISTIC + " (it generates a random key and certificate)"],
  [
    "genSignedCertWithKey",
    NOT_DETERMINISTIC + " (it generates a certificate with a random serial and the current time)",
  ],
  // helm-only functions
  ["toYaml", "it is a Helm function, not a sprig function; khook pipelines only have sprig's hermetic functions"],
  ["fromYaml", "it is a Helm function, not a sprig function; khook pipelines only have sprig's hermetic functions"],
  ["toToml", "it is a Helm function, not a sprig function; khook pipelines only have sprig's hermetic functions"],
  [
    "include",
    "it is a Helm function (templates are not available); khook pipelines only have sprig's hermetic functions",
  ],
  ["tpl", "it is a Helm function (values are data, never templates)"],
  ["required", "it is a Helm function; a missing variable is already an error in khook (use :- for fallbacks)"],
  ["lookup", "it is a Helm function that reads the cluster; pipelines must be hermetic"],
]);

/** Names of the functions allowed: sprig's hermetic set minus exclusions, plus text/template builtins. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([
  ...Object.keys(SPRIG_FUNCTIONS),
  ...Object.keys(BUILTIN_FUNCTIONS),
]);

export function lookupFunction(name: string): FuncDef | undefined {
  if (Object.hasOwn(SPRIG_FUNCTIONS, name)) return SPRIG_FUNCTIONS[name];
  if (Object.hasOwn(BUILTIN_FUNCTIONS, name)) return BUILTIN_FUNCTIONS[name];
  return undefined;
}
