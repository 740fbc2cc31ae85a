import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Built into dashboard/dist and served by the API process under /dashboard/ (src/http/dashboard-routes.ts).
// The Content-Security-Policy there allows no inline script or style: nothing may be inlined here.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
  },
  logLevel: 'warn',
});
