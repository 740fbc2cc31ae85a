import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Compiled code lives in dist/src; the project root holds schemas/ and migrations/.
export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const schemasDir = resolve(projectRoot, 'schemas');
export const migrationsDir = resolve(projectRoot, 'migrations');
/** The built dashboard (`npm run build`): index.html and assets/. */
export const dashboardDistDir = resolve(projectRoot, 'dashboard', 'dist');
/** The OpenAPI document, written by `npm run build` (src/openapi/write.ts) and served at /openapi.json. */
export const openApiDocumentPath = resolve(projectRoot, 'dist', 'openapi.json');
/** The browser SDK as built by `npm run build` (sdk/build-browser.js): tracking.mjs and tracking.js. */
export const browserSdkDir = resolve(projectRoot, 'sdk', 'dist', 'browser');
export const sdkPackagePath = resolve(projectRoot, 'sdk', 'package.json');
