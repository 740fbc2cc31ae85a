import type { ComponentChildren, RefObject } from 'preact';

/**
 * A wide table's own scrolling box: on a narrow screen the table scrolls sideways inside it, never
 * the page. It takes the keyboard focus, so that arrow keys scroll it too. Named '<label> table'.
 */
export function ScrollBox({ label, children, boxRef }: { label: string; children: ComponentChildren; boxRef?: RefObject<HTMLDivElement | null> }) {
  return (
    <div class="scroll-box" role="region" aria-label={`${label} table`} tabIndex={0} ref={boxRef}>
      {children}
    </div>
  );
}
