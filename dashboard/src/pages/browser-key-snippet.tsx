import { useEffect, useState } from 'preact/hooks';
import { sdkManifest, type SdkFile, type SdkManifest } from '../api';
import { ErrorText } from '../components';
import { CopyButton } from '../components/copy-button';
import { SnippetFigure } from '../components/snippet';
import { formatCount } from '../components/format';

/** A value written into an HTML attribute of the snippet. */
const attribute = (text: string): string => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
/** A value written as a JavaScript string inside an inline script: `</script>` cannot end it. */
const jsString = (text: string): string => JSON.stringify(text).replace(/</g, '\\u003c');

interface SnippetValues {
  /** The service's origin: where the page loads the SDK from and sends to. */
  origin: string;
  license: string;
  browserKey: string;
}

function trackerOptions({ origin, license, browserKey }: SnippetValues, indent: string): string {
  return [`{`, `  baseUrl: ${jsString(origin)},`, `  licenseCode: ${jsString(license)},`, `  browserKey: ${jsString(browserKey)},`, `}`].join(`\n${indent}`);
}

/** The script-tag form: the pinned tracking.js with its integrity, then an inline script. */
export function scriptTagSnippet(values: SnippetValues, file: SdkFile): string {
  return [
    `<script src="${attribute(values.origin + file.path)}" integrity="${attribute(file.integrity)}" crossorigin="anonymous"></script>`,
    `<script>`,
    `  const tracker = Tracking.createTracker(${trackerOptions(values, '  ')});`,
    `  tracker.page();`,
    `</script>`,
  ].join('\n');
}

/** The ES-module form: the pinned tracking.mjs, its integrity given in an import map. */
export function moduleSnippet(values: SnippetValues, file: SdkFile): string {
  const url = values.origin + file.path;
  return [
    `<script type="importmap">`,
    JSON.stringify({ integrity: { [url]: file.integrity } }, null, 2).replace(/</g, '\\u003c'),
    `</script>`,
    `<script type="module">`,
    `  import { createTracker } from ${jsString(url)};`,
    `  const tracker = createTracker(${trackerOptions(values, '  ')});`,
    `  tracker.page();`,
    `</script>`,
  ].join('\n');
}

const fileNamed = (manifest: SdkManifest, name: string): SdkFile | undefined => manifest.files.find((file) => file.name === name);

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
/** What each file is for. */
const fileUse: Record<string, string> = { 'tracking.js': 'script tag', 'tracking.mjs': 'ES module' };

/** The manifest of the browser SDK, asked once per page shown; its failure as text. */
export function useSdkManifest(): { manifest: SdkManifest | null; error: unknown } {
  const [manifest, setManifest] = useState<SdkManifest | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let current = true;
    sdkManifest().then(
      (found) => current && setManifest(found),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, []);
  return { manifest, error };
}

/** The SDK this service serves: its version, and each file's gzipped size and integrity. */
export function SdkFacts({ manifest, error }: { manifest: SdkManifest | null; error: unknown }) {
  return (
    <section aria-labelledby="sdk-heading">
      <h3 id="sdk-heading">Browser SDK</h3>
      <ErrorText error={error} />
      {!manifest ? (
        error ? null : (
          <p role="status">Loading the SDK's manifest…</p>
        )
      ) : (
        <>
          <p class="hint">
            Version {manifest.version}, served by this service with the files' integrity; a key made here comes with a snippet ready for a page.
          </p>
          <ul class="sdk-files">
            {manifest.files.map((file) => (
              <li key={file.name}>
                <code>{file.path}</code>
                {fileUse[file.name] ? <span class="hint"> ({fileUse[file.name]})</span> : null}
                <span class="sdk-size">
                  {kib(file.gzipBytes)} gzipped ({formatCount(file.gzipBytes)} bytes; {formatCount(file.bytes)} bytes as served)
                </span>
                <span class="sdk-integrity">
                  integrity <code>{file.integrity}</code> <CopyButton text={file.integrity} label={`Copy the integrity of ${file.name}`} />
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** The snippets of a page that uses `browserKey`: script tag, and ES module where the manifest has one. */
export function PageSnippets({ manifest, error, license, browserKey }: { manifest: SdkManifest | null; error: unknown; license: string; browserKey: string }) {
  if (!manifest) return error ? <p class="hint">No snippet: the SDK's manifest could not be read.</p> : <p role="status">Loading the snippet…</p>;
  const values = { origin: window.location.origin, license, browserKey };
  const script = fileNamed(manifest, 'tracking.js');
  const module = fileNamed(manifest, 'tracking.mjs');
  const snippets = [
    ...(script ? [{ title: 'Script tag', name: 'script tag', text: scriptTagSnippet(values, script) }] : []),
    ...(module ? [{ title: 'ES module', name: 'ES module', text: moduleSnippet(values, module) }] : []),
  ];
  return (
    <>
      <p>Put this in the page, before the closing &lt;/body&gt; tag: it loads the SDK pinned to version {manifest.version} and sends a page view.</p>
      {snippets.map((snippet) => (
        <SnippetFigure key={snippet.title} snippet={snippet} />
      ))}
      {module ? <p class="hint">The ES module's integrity is checked by browsers that know integrity in import maps; the others load it unchecked.</p> : null}
    </>
  );
}
