import { Code } from '@mantine/core';
import type { ReactNode } from 'react';

/** A block of code or data that wraps rather than scrolls, and can be reached with the keyboard. */
export function CodeBlock({ children, label, testId }: { children: ReactNode; label: string; testId?: string }) {
  return (
    <Code block tabIndex={0} aria-label={label} data-testid={testId} style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
      {children}
    </Code>
  );
}
