import type { NextFunction, Request, Response } from 'express';

/**
 * `Server-Timing: app;dur=<ms>` on each reply: the service's own time from the request reaching
 * the router to its reply being written, whatever the network adds (the leads bench reads it).
 */
export function serverTiming(_req: Request, res: Response, next: NextFunction): void {
  const started = performance.now();
  const json = res.json.bind(res);
  res.json = (body?: unknown) => {
    if (!res.headersSent) res.setHeader('Server-Timing', `app;dur=${(performance.now() - started).toFixed(1)}`);
    return json(body);
  };
  next();
}
