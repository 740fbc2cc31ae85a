import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import helmet from 'helmet';
import { notFound } from '../errors.js';
import { dashboardDistDir } from '../paths.js';

/**
 * The dashboard's Content-Security-Policy: its own scripts, styles and calls only, nothing inline,
 * no framing. The build emits no inline script or style (dashboard/vite.config.ts).
 */
export const dashboardCspDirectives: Readonly<Record<string, readonly string[]>> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'font-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

const securityHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: dashboardCspDirectives,
  },
  referrerPolicy: { policy: 'no-referrer' },
  frameguard: { action: 'deny' },
  // Whether the service is reached over HTTPS is the deployment's choice (a TLS proxy in front):
  // HSTS, if wanted, is set there.
  strictTransportSecurity: false,
});

/** Whether `error` is a file that is not there (send's 404 or the file system's ENOENT). */
function missingFile(error: unknown): boolean {
  const { status, code } = error as { status?: unknown; code?: unknown };
  return status === 404 || code === 'ENOENT';
}

/**
 * The dashboard, a single-page app built into `distDir`: GET / redirects to /dashboard; /dashboard
 * and every path under it answer index.html (the app shows the page of the path), never cached;
 * /dashboard/assets/<file> the built files, whose names carry a hash of their content, cached for
 * a year. Without a build, a 503 that says how to make one.
 */
export function dashboardRoutes(distDir = dashboardDistDir): Router {
  const router = express.Router();
  const assetsDir = join(distDir, 'assets');

  router.get('/', (_req, res) => res.redirect(302, '/dashboard'));

  router.get('/dashboard/assets/:file', securityHeaders, (req: Request, res: Response, next: NextFunction) => {
    res.sendFile(req.params.file as string, { root: assetsDir, dotfiles: 'deny', maxAge: '365d', immutable: true, etag: false }, (error) => {
      if (!error || res.headersSent) return;
      const { status } = error as { status?: unknown };
      next(missingFile(error) || status === 403 ? notFound('no such dashboard file') : error);
    });
  });

  router.get(['/dashboard', '/dashboard/*splat'], securityHeaders, (_req: Request, res: Response, next: NextFunction) => {
    res.sendFile('index.html', { root: distDir, headers: { 'Cache-Control': 'no-cache' }, etag: false, lastModified: false }, (error) => {
      if (!error || res.headersSent) return;
      if (!missingFile(error)) return next(error);
      res
        .status(503)
        .set({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' })
        .send('The dashboard is not built: run `npm run build` (it builds the server and the dashboard), then reload.\n');
    });
  });

  return router;
}
