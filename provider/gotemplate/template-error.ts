/**
 * The one error type the pipeline evaluator throws. Messages are for people and never contain the
 * input value (values may be secrets); pipeline text and function names are fine.
 */
export class PipelineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PipelineError";
  }
}
