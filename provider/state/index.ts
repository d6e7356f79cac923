/** The run-state record: pure model, journal, stores, lease, location and moves. */
export * from "./record.js";
export * from "./store.js";
export * from "./journal.js";
export * from "./secret-store.js";
export * from "./lease.js";
export * from "./location.js";
export * from "./moves.js";
export * from "./spec-records.js";
