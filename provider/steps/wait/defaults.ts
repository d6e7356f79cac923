/**
 * The defaults of a `wait:` block: the loader applies them once (kind.ts), the hash leaves out
 * the fields equal to them, and the definition writes them into the schema's `default`s.
 */
export const WAIT_DEFAULTS = { allNamespaces: false } as const;
