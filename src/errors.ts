/**
 * The one error type of the service. `form` picks the reply form (docs/decisions.md, Replies):
 * - 'request' (form A): `{ error, code }` for protocol-level problems;
 * - 'item'    (form B): `{ response: { status: "error", message } }` for invalid item content.
 */
export type ReplyForm = 'request' | 'item';

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly form: ReplyForm = 'request',
    /** A short label for metrics (rejected items by reason). */
    readonly reason: string = 'error',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const invalidItem = (message: string, reason = 'invalid'): AppError =>
  new AppError(400, message, 'item', reason);

export const badRequest = (message: string): AppError => new AppError(400, message, 'request', 'bad_request');

export const unauthorized = (message = 'invalid or missing credentials'): AppError =>
  new AppError(401, message, 'request', 'unauthorized');

export const notFound = (message = 'not found'): AppError => new AppError(404, message, 'request', 'not_found');

export const forbidden = (message: string): AppError => new AppError(403, message, 'request', 'forbidden');

export const conflict = (message: string): AppError => new AppError(409, message, 'request', 'conflict');
