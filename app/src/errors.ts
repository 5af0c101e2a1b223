/** The app's HTTP errors: one body shape, `{ statusCode, error, message }`, the same as Cortex's. */
import { STATUS_CODES } from "node:http";

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export function errorBody(statusCode: number, message: string) {
  return { statusCode, error: STATUS_CODES[statusCode] ?? "Error", message };
}
