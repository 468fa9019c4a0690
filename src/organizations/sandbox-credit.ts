import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { SYSTEM_ACTOR, type CommandContext } from '../common/event.js';
import { AppError, ValidationFailed } from '../common/errors.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { WalletLedger } from '../wallets/wallet-ledger.port.js';
import { SANDBOX_CREDIT_REFERENCE } from '../wallets/wallet.events.js';
import { OrganizationStore } from './organization.store.js';

/** Organizations examined per pass: a bound on one pass's work; the next pass continues. */
const BATCH = 100;

export interface SandboxCreditReport {
  readonly examined: number;
  readonly credited: number;
  /** Organizations whose credit could not be written this pass: each reported, none holding up the others. */
  readonly failed: number;
}

/**
 * Registration writes the organization, then its sandbox credit on the test wallet stream: two
 * streams, so no single write. Registration tries the credit at once; this sweep finishes what a
 * failure left half-done. It looks in the read models for organizations older than the recovery
 * deadline whose test wallet has no `sandbox-credit` funding, reads the credit they are owed from
 * their own stream (the authority) and funds it under that reference, which the wallet writes at
 * most once. So running it on every instance, or against a lagging read model, is safe.
 */
@Injectable()
export class SandboxCreditSweep extends PeriodicSweep<SandboxCreditReport> {
  /** Organizations found owing nothing (registered before the credit was recorded, or with none configured): not read again. */
  private readonly owingNothing = new Set<string>();
  /**
   * Organizations whose recorded credit the wallet refuses outright (above one funding's limit,
   * recorded by a release that did not check SANDBOX_CREDIT_KOBO): retrying cannot succeed, so they
   * are not read again and cannot fill a batch ahead of those that can be credited.
   */
  private readonly refused = new Set<string>();

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Inject(WalletLedger) private readonly ledger: WalletLedger,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(Clock) clock: Clock,
  ) {
    super('SandboxCreditSweep', 'sandbox-credit', config.verifications.recoveryIntervalMs, clock);
  }

  /**
   * Credits one organization's test wallet with what its registration recorded, once. `position`:
   * of the funding, or of the newest wallet event when it was there already.
   */
  async credit(organizationId: string, context: CommandContext): Promise<{ outcome: 'credited' | 'already_credited' | 'owes_nothing'; position?: bigint }> {
    const { state } = await this.organizations.load(organizationId);
    if (state.id === null || state.sandboxCreditKobo === 0) return { outcome: 'owes_nothing' };
    const funded = await this.ledger.fund({ organizationId, environment: 'test' }, { fundingReference: SANDBOX_CREDIT_REFERENCE, amountKobo: state.sandboxCreditKobo }, context);
    return { outcome: funded.funded ? 'credited' : 'already_credited', position: funded.position };
  }

  protected async pass(now: Date): Promise<SandboxCreditReport> {
    const deadline = new Date(now.getTime() - this.config.verifications.recoveryDeadlineMs);
    const { rows } = await this.pool.query<{ id: string }>(
      `select o.id from organizations o
        where o.created_at < $1 and o.id <> all($2::text[])
          and not exists (select 1 from wallet_ledger l
                           where l.organization_id = o.id and l.entry_type = 'funding' and l.reference = $3 and l.environment = 'test')
        order by o.created_at limit $4`,
      [deadline, [...this.owingNothing, ...this.refused], SANDBOX_CREDIT_REFERENCE, BATCH],
    );
    let credited = 0;
    let failed = 0;
    for (const { id } of rows) {
      let outcome: Awaited<ReturnType<SandboxCreditSweep['credit']>>['outcome'];
      try {
        ({ outcome } = await this.credit(id, { correlationId: `sandbox-credit-${id}`, actor: SYSTEM_ACTOR }));
      } catch (error) {
        // One organization's failure must not stop the sweep for every later one.
        failed += 1;
        if (error instanceof ValidationFailed) this.refused.add(id);
        this.logger.error(`Sandbox credit: the credit of ${id} could not be written (${error instanceof AppError ? error.code : 'store error'}); the others go on`);
        continue;
      }
      if (outcome === 'owes_nothing') this.owingNothing.add(id);
      if (outcome === 'credited') credited += 1;
    }
    if (credited > 0) this.logger.log(`Sandbox credit: ${credited} organizations credited after a failed registration`);
    return { examined: rows.length, credited, failed };
  }
}
