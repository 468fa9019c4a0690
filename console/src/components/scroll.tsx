import type { ReactNode } from 'react';

/**
 * A table that scrolls sideways on narrow screens. Plain overflow rather than Mantine's scroll
 * area, so that the region can take keyboard focus and be scrolled with the arrow keys. The region
 * is positioned so that it clips what is positioned inside it too: a visually hidden header label
 * (absolute) past its edge otherwise widened the whole page on a phone.
 */
export function Scroll({ minWidth, children }: { minWidth: number; children: ReactNode }) {
  return (
    <div tabIndex={0} style={{ overflowX: 'auto', position: 'relative' }}>
      <div style={{ minWidth }}>{children}</div>
    </div>
  );
}
