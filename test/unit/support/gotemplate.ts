import { parsePipeline, runPipeline } from "../../../provider/gotemplate/index.js";

/** Parse + run, as the loader does for `${NAME | pipeline}`. */
export function evaluatePipeline(value: string, pipeline: string): string {
  return runPipeline(parsePipeline(pipeline), value);
}
