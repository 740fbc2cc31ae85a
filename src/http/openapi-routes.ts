import { readFile } from 'node:fs/promises';
import { Router, type Request, type Response } from 'express';
import { openApiDocumentPath } from '../paths.js';

/**
 * GET /openapi.json: the OpenAPI document `npm run build` wrote (src/openapi), as it was written,
 * to anyone. Read once, then kept: it changes only with a build, and a build means a restart.
 * Without a build, a 503 that says how to make one.
 */
export function openApiRoutes(documentPath = openApiDocumentPath): Router {
  const router = Router();
  let document: Promise<Buffer> | null = null;

  router.get('/openapi.json', async (_req: Request, res: Response) => {
    document ??= readFile(documentPath);
    let bytes: Buffer;
    try {
      bytes = await document;
    } catch {
      document = null;
      res
        .status(503)
        .set({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' })
        .send('The OpenAPI document is not built: run `npm run build` (it writes dist/openapi.json), then reload.\n');
      return;
    }
    res.set({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' }).send(bytes);
  });
  return router;
}
