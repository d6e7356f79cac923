/** The engine's pause: an abortable timer (injectable through RunOptions.sleep so tests need no timed assertions). */
import { setTimeout as delay } from "node:timers/promises";
import type { SleepFn } from "./types.js";

export const defaultSleep: SleepFn = (ms, signal) => delay(ms, undefined, { signal });
