/** khook's own version, read once from package.json (this file runs from dist/provider/). */
export const KHOOK_VERSION: string = (require("../../package.json") as { version: string }).version;
