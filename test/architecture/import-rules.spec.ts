import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import type { Arrow } from './import-graph.js';
import { readImportGraph } from './import-graph.js';
import { fileCycles, folderCycles, layerViolations } from './import-rules.js';

// The rules are written out at the top of import-rules.ts.
describe('The imports of src/ and projections/', () => {
  const arrows = readImportGraph(resolve('.'), ['src', 'projections']);

  it('are read (a graph of a few hundred arrows, not an empty one)', () => {
    expect(arrows.length).toBeGreaterThan(500);
    expect(arrows).toContainEqual({ from: 'src/app.module.ts', to: 'src/core.module.ts' });
  });

  it('point inward: foundation, then features, then projections/ and the wiring', () => {
    expect(layerViolations(arrows)).toEqual([]);
  });

  it('make no cycle between files', () => {
    expect(fileCycles(arrows)).toEqual([]);
  });

  it('make no cycle between folders', () => {
    expect(folderCycles(arrows)).toEqual([]);
  });
});

describe('The import rules', () => {
  const arrow = (from: string, to: string): Arrow => ({ from, to });

  it('report each arrow that points outward, by rule', () => {
    expect(
      layerViolations([
        arrow('src/common/envelope.ts', 'src/wallets/wallet.decider.ts'),
        arrow('src/event-store/create-event-store.ts', 'src/core.module.ts'),
        arrow('src/wallets/wallets.module.ts', 'src/core.module.ts'),
        arrow('src/wallets/integrator-wallet.controller.ts', 'projections/wallets/wallets.projection.ts'),
        arrow('projections/status/projections.controller.ts', 'src/admin/admin.guard.ts'),
        arrow('src/wallets/integrator-wallet.controller.ts', 'src/verifications/verification.dto.ts'),
        arrow('src/wallets/money.rule.ts', 'src/wallets/wallet-ledger.ts'),
      ]),
    ).toEqual([
      'foundation imports a feature, projections/ or the wiring: src/common/envelope.ts -> src/wallets/wallet.decider.ts',
      'foundation imports a feature, projections/ or the wiring: src/event-store/create-event-store.ts -> src/core.module.ts',
      'only the wiring and the entry points import the wiring: src/wallets/wallets.module.ts -> src/core.module.ts',
      'src/ imports projections/: src/wallets/integrator-wallet.controller.ts -> projections/wallets/wallets.projection.ts',
      'projections/ imports a feature file that is not *.events.ts, *.read-model.ts or *.rule.ts: projections/status/projections.controller.ts -> src/admin/admin.guard.ts',
      "a feature imports another feature's DTOs: src/wallets/integrator-wallet.controller.ts -> src/verifications/verification.dto.ts",
      'a *.rule.ts imports a feature file that is not *.events.ts, *.read-model.ts or *.rule.ts: src/wallets/money.rule.ts -> src/wallets/wallet-ledger.ts',
    ]);
  });

  it('let the wiring, the entry points, contracts, shared DTOs and tests through', () => {
    expect(
      layerViolations([
        arrow('src/app.module.ts', 'projections/projections.module.ts'),
        arrow('src/admin/cli.ts', 'src/app.module.ts'),
        arrow('projections/cli.ts', 'src/config/runtime.ts'),
        arrow('projections/wallets/wallets.projection.ts', 'src/wallets/wallet.events.ts'),
        arrow('projections/wallets/wallets.projection.ts', 'src/wallets/wallet.read-model.ts'),
        arrow('projections/wallets/wallets.projection.ts', 'src/wallets/money.rule.ts'),
        arrow('src/wallets/money.rule.ts', 'src/wallets/wallet.events.ts'),
        arrow('src/wallets/integrator-wallet.controller.ts', 'src/common/api.dto.ts'),
        arrow('src/wallets/wallets.module.ts', 'src/auth/api-key.guard.ts'),
        arrow('src/audit/audit-cli.e2e-spec.ts', 'projections/index.ts'),
      ]),
    ).toEqual([]);
  });

  it('find a cycle between files, with the path around it', () => {
    expect(fileCycles([arrow('src/a/x.ts', 'src/a/y.ts'), arrow('src/a/y.ts', 'src/a/z.ts'), arrow('src/a/z.ts', 'src/a/x.ts'), arrow('src/a/z.ts', 'src/b/w.ts')])).toEqual([
      'file cycle: src/a/x.ts -> src/a/y.ts -> src/a/z.ts -> src/a/x.ts',
    ]);
  });

  it('name every file of a tangle of cycles, and the shortest cycle in it', () => {
    expect(fileCycles([arrow('src/a/x.ts', 'src/a/y.ts'), arrow('src/a/y.ts', 'src/a/x.ts'), arrow('src/a/y.ts', 'src/a/z.ts'), arrow('src/a/z.ts', 'src/a/y.ts')])).toEqual([
      'file cycle: src/a/x.ts -> src/a/y.ts -> src/a/x.ts (one of the cycles among src/a/x.ts, src/a/y.ts, src/a/z.ts)',
    ]);
  });

  it('find a cycle between folders that no two files make, with the arrows that make it', () => {
    const cycles = folderCycles([
      arrow('src/wallets/history.ts', 'src/audit/replay.ts'),
      arrow('src/audit/replay.ts', 'src/wallets/chain.ts'),
      arrow('src/organizations/store.ts', 'src/wallets/chain.ts'),
    ]);
    expect(cycles).toEqual([
      'folder cycle: src/audit -> src/wallets -> src/audit\n    src/audit/replay.ts -> src/wallets/chain.ts\n    src/wallets/history.ts -> src/audit/replay.ts',
    ]);
  });
});
