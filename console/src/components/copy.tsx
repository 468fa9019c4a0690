import { Button, CopyButton as MantineCopyButton } from '@mantine/core';

export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  return (
    <MantineCopyButton value={value}>
      {({ copied, copy }) => (
        <Button size="xs" variant={copied ? 'filled' : 'outline'} color={copied ? 'teal.9' : undefined} onClick={copy} aria-label={label}>
          {copied ? 'Copied' : 'Copy'}
        </Button>
      )}
    </MantineCopyButton>
  );
}
