import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../errors.js';

export const singleItemLimit = '1mb';
export const bulkLimit = '5mb';

/** JSON bodies only: anything else is 415; size and syntax errors become form A replies. */
export function jsonBody(limit: string): RequestHandler[] {
  const parse = express.json({ limit, strict: false, type: () => true });
  return [
    (req: Request, _res: Response, next: NextFunction) => {
      if (!req.is('application/json')) {
        throw new AppError(415, 'Content-Type must be application/json', 'request', 'unsupported_media_type');
      }
      next();
    },
    (req: Request, res: Response, next: NextFunction) => {
      parse(req, res, (error?: unknown) => {
        if (!error) return next();
        const type = (error as { type?: string }).type;
        if (type === 'entity.too.large') return next(new AppError(413, `body is larger than ${limit}`, 'request', 'too_large'));
        if (type === 'entity.parse.failed') return next(new AppError(400, 'body is not valid JSON', 'request', 'malformed_json'));
        if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
          return next(new AppError(415, 'body must be UTF-8 JSON', 'request', 'unsupported_media_type'));
        }
        return next(error);
      });
    },
  ];
}
