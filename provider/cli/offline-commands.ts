/**
 * The commands that never run a step. bin/khook (launch.ts) and the single executable (sea.ts)
 * start them from the offline bundle, without what only a run against a cluster reaches
 * (scripts/offline-bundle.mjs); any other command, and any new one, gets the whole bundle. A
 * module of its own because both loaders read it, and the single executable's must not pull in
 * launch.ts's fallback to the CLI's modules.
 */
export const OFFLINE_COMMANDS: ReadonlySet<string> = new Set(["validate", "graph", "schema", "version"]);

/** Whether the offline bundle serves `command` (the first argument; none is not a command). */
export function isOfflineCommand(command: string | undefined): boolean {
  return command !== undefined && OFFLINE_COMMANDS.has(command);
}
