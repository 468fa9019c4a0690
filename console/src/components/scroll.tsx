import type { ReactNode } from 'react';

/**
 * A table that scrolls sideways on narrow screens. Plain overflow rather than Mantine's scroll
 * area, so that the region can take keyboard focus and be scrolled with the arrow keys. Positioned,
 * so that what is absolutely placed inside (visually hidden headers' text) scrolls with the table
 * instead of widening the whole page.
 */
export function Scroll({ minWidth, children }: { minWidth: number; children: ReactNode }) {
  return (
    <div tabIndex={0} style={{ overflowX: 'auto', position: 'relative' }}>
      <div style={{ minWidth }}>{children}</div>
    </div>
  );
}
