import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, notFound } from '../errors.js';
import { browserSdkDir, sdkPackagePath } from '../paths.js';

/** The files of the browser SDK, by the name a page asks for (docs/browser.md, The browser SDK). */
const fileNames = ['tracking.mjs', 'tracking.js'] as const;
type FileName = (typeof fileNames)[number];

interface SdkFile {
  name: FileName;
  body: Buffer;
  /** `sha384-<base64>`: what a page's `integrity` attribute holds. */
  integrity: string;
  gzipBytes: number;
}

interface Sdk {
  version: string;
  /** The version and the build: `0.1.0-<12 hex of the files' SHA-256>`, what a pinned path names. */
  build: string;
  files: Map<FileName, SdkFile>;
}

/** Read once: the files only change with a new build, which comes with a restart. */
let loading: Promise<Sdk> | null = null;

async function loadSdk(): Promise<Sdk> {
  const { version } = JSON.parse(await readFile(sdkPackagePath, 'utf8')) as { version: string };
  const files = new Map<FileName, SdkFile>();
  const whole = createHash('sha256');
  for (const name of fileNames) {
    const body = await readFile(join(browserSdkDir, name));
    whole.update(body);
    files.set(name, { name, body, integrity: `sha384-${createHash('sha384').update(body).digest('base64')}`, gzipBytes: gzipSync(body, { level: 9 }).length });
  }
  // The bytes name the pinned path, not the version alone: a rebuild that changes them (another
  // bundler, a fix without a version bump) gets a new path, so no page's `integrity` ever meets
  // other bytes at the path it pinned; it gets a 404 there, and the dashboard shows the new snippet.
  return { version, build: `${version}-${whole.digest('hex').slice(0, 12)}`, files };
}

function sdk(): Promise<Sdk> {
  loading ??= loadSdk().catch((error: unknown) => {
    loading = null;
    const { code } = error as { code?: unknown };
    if (code === 'ENOENT') throw new AppError(503, 'the browser SDK is not built: run `npm run build`', 'request', 'not_built');
    throw error;
  });
  return loading;
}

/** Any page may load the SDK, also with `integrity` (which needs CORS) and under a strict COEP. */
function crossOrigin(_req: Request, res: Response, next: NextFunction): void {
  res.set({ 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin', 'X-Content-Type-Options': 'nosniff' });
  next();
}

/**
 * The browser SDK (docs/browser.md): /sdk/tracking.mjs and /sdk/tracking.js follow the service's
 * build (cached 5 minutes); /sdk/v<version>-<build>/... are pinned to the bytes, cached a year, for
 * a page that loads them with `integrity`; /sdk/manifest.json gives each file's path, integrity and sizes.
 */
export function sdkRoutes(): Router {
  const router = Router();
  router.use('/sdk', crossOrigin);

  router.get('/sdk/manifest.json', async (_req: Request, res: Response) => {
    const { version, build, files } = await sdk();
    res.set('Cache-Control', 'public, max-age=300').json({
      version,
      files: [...files.values()].map((file) => ({
        name: file.name,
        path: `/sdk/v${build}/${file.name}`,
        bytes: file.body.length,
        gzipBytes: file.gzipBytes,
        integrity: file.integrity,
      })),
    });
  });

  const send = (res: Response, file: SdkFile, cacheControl: string): void => {
    res
      .set({ 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': cacheControl, ETag: `"${file.integrity}"` })
      .send(file.body);
  };

  router.get('/sdk/:file', async (req: Request, res: Response) => {
    const file = (await sdk()).files.get(req.params.file as FileName);
    if (!file) throw notFound(`no such SDK file: the files are ${fileNames.join(', ')}`);
    if (req.get('if-none-match') === `"${file.integrity}"`) {
      res.status(304).set({ 'Cache-Control': 'public, max-age=300', ETag: `"${file.integrity}"` }).end();
      return;
    }
    send(res, file, 'public, max-age=300');
  });

  router.get('/sdk/:version/:file', async (req: Request, res: Response) => {
    const { build, files } = await sdk();
    if (req.params.version !== `v${build}`) throw notFound(`this service serves the browser SDK v${build} only: take the new snippet (GET /sdk/manifest.json)`);
    const file = files.get(req.params.file as FileName);
    if (!file) throw notFound(`no such SDK file: the files are ${fileNames.join(', ')}`);
    send(res, file, 'public, max-age=31536000, immutable');
  });
  return router;
}
