/**
 * The defaults of each form of a `delete:` block: the loader applies them once (kind.ts), the
 * hash leaves out the fields equal to them, and the definition writes them into the schema's
 * `default`s.
 */
import { SPEC_DEFAULTS } from "../../dsl/defaults.js";

export const DELETE_DEFAULTS = {
  byManifests: { ignoreNotFound: true },
  byResource: { allNamespaces: false, ignoreNotFound: true },
  byRelease: { namespace: SPEC_DEFAULTS.namespace, ignoreNotFound: true },
} as const;
