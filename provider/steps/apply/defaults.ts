/**
 * The defaults of a `apply:` block: the loader applies them once (kind.ts), the hash leaves out
 * the fields equal to them, and the definition writes them into the schema's `default`s.
 */
export const APPLY_DEFAULTS = { createNamespace: false, serverSide: false } as const;
