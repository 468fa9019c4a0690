import { Badge } from '@mantine/core';

const COLORS: Record<string, string> = { found: '#237032', not_found: '#8a5a00', failed: 'red.9', pending: 'gray.8' };

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={COLORS[status] ?? 'gray.8'} variant="filled">
      {status.replace('_', ' ')}
    </Badge>
  );
}
