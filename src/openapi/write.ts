import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { openApiDocumentPath } from '../paths.js';
import { openApiDocument } from './document.js';

/** `npm run build`, after tsc: writes the OpenAPI document that GET /openapi.json serves. */
const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;

function written(): string | null {
  try {
    return readFileSync(openApiDocumentPath, 'utf8');
  } catch {
    return null;
  }
}

// Left alone when unchanged: dashboard/build.js rebuilds the dashboard (its reply types come from
// this document) only when the document is newer than the build.
if (written() !== text) {
  mkdirSync(dirname(openApiDocumentPath), { recursive: true });
  writeFileSync(openApiDocumentPath, text);
}
