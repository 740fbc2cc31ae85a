import { CopyButton } from './copy-button';

/** A snippet of code to copy, as text in a scrollable block under its title. */
export interface Snippet {
  title: string;
  /** How its Copy button names it: `Copy the <name> snippet`. */
  name: string;
  text: string;
}

export function SnippetFigure({ snippet }: { snippet: Snippet }) {
  return (
    <figure class="snippet">
      <figcaption>
        {snippet.title} <CopyButton text={snippet.text} label={`Copy the ${snippet.name} snippet`} />
      </figcaption>
      <pre tabIndex={0}>
        <code>{snippet.text}</code>
      </pre>
    </figure>
  );
}
