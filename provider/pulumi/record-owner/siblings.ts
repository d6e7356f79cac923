/**
 * One Khook resource per record in a program: two resources of one stack on one record would take
 * it from each other on every update, and a destroy would leave one's objects behind. The SDK checks
 * it at program time and the provider's check for a program in any language; both tell it from a
 * rename, which has one resource in the program. Light: the SDK loads it at program start.
 */
import { UNKNOWN } from "../wire.js";

/** What a record is keyed by (bundle.ts `recordKey`): two resources with one key share one record. */
export interface RecordKey {
  readonly key: string;
  readonly specName: string;
  readonly where: string;
}

/**
 * Registers the resource `name` on its record in `records` (one program run's, or one provider
 * process's); returns why not, naming the first resource and the fix, when another resource has
 * it. Two resources of one stack on one record would take it from each other on every update, and
 * a destroy would leave one's objects behind. A rename is never refused: it has one resource in
 * the program. A key still waiting for an unknown value is checked once it is known.
 */
export function claimRecord(
  records: Map<string, string>,
  name: string,
  record: RecordKey | undefined,
): string | undefined {
  if (record === undefined || record.key.includes(UNKNOWN)) return undefined;
  const first = records.get(record.key);
  if (first === undefined || first === name) {
    records.set(record.key, name);
    return undefined;
  }
  return (
    `the Khook resource "${first}" of this program already uses ${record.where} (spec name "${record.specName}"). ` +
    `Two resources on one record would take it from each other on every update, and a destroy would leave one's objects behind. ` +
    `Give this spec a distinct metadata.name (or state.name), e.g. with a variable: name: ${record.specName}-\${ENV}. ` +
    `A stack that already holds both (made by an earlier khook): give one of them a distinct state.name, which keeps its objects' ownership marks (metadata.name is in them)`
  );
}
