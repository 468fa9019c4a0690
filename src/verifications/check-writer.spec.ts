import { describe, expect, it } from '@jest/globals';
import { SystemClock } from '../common/clock.js';
import type { EventStore } from '../event-store/event-store.port.js';
import type { WalletLedger } from '../wallets/wallet-ledger.port.js';
import { checkWriterFor, StepwiseCheckWriter, TogetherCheckWriter } from './check-writer.js';
import type { VerificationStreams } from './verification.stream.js';

describe('checkWriterFor', () => {
  const parts = [{} as VerificationStreams, {} as WalletLedger, new SystemClock()] as const;

  it('writes a check in two transactions where the store appends several streams atomically, and append by append where it writes them in order', () => {
    expect(checkWriterFor({ multiStreamAppends: 'atomic' } as EventStore, ...parts)).toBeInstanceOf(TogetherCheckWriter);
    expect(checkWriterFor({ multiStreamAppends: 'in_order' } as EventStore, ...parts)).toBeInstanceOf(StepwiseCheckWriter);
  });
});
