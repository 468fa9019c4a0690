import { asDomainEvent, occurredAt } from '../../src/common/event.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { PAYMENT_ACCOUNT_CATEGORY, TOPUP_CATEGORY, type PaymentAccountEvent, type TopUpEvent } from '../../src/payments/topup.events.js';
import { PAYMENT_ACCOUNTS_TABLE, TOPUPS_PROJECTION, TOPUPS_TABLE } from '../../src/payments/topup.read-model.js';
import { eachEvent, type Projection, type ProjectionContext } from '../projection.js';

/**
 * `payment_topups`: one row per top-up with its latest state; `payment_accounts`: the dedicated accounts (and the requests for them), by customer code. Each row records the stream revision
 * it applied, so a replayed event changes nothing.
 */
export const topUpsProjection: Projection = {
  name: TOPUPS_PROJECTION,
  categories: [TOPUP_CATEGORY, PAYMENT_ACCOUNT_CATEGORY],
  tables: [TOPUPS_TABLE, PAYMENT_ACCOUNTS_TABLE],
  handle: eachEvent(async (recorded: RecordedEvent, context: ProjectionContext): Promise<void> => {
    const event = asDomainEvent<TopUpEvent | PaymentAccountEvent>(recorded);
    if (event.type === 'DedicatedAccountRequested' || event.type === 'DedicatedAccountAssigned' || event.type === 'DedicatedAccountAssignmentFailed') {
      await applyAccount(context, event, recorded.revision.toString());
      return;
    }
    const table = context.table(TOPUPS_TABLE);
    const at = occurredAt(recorded);
    const revision = recorded.revision.toString();
    const { reference } = event.data;
    const update = (set: string, values: readonly unknown[]) =>
      context.query(`update ${table} set ${set}, revision = $2, updated_at = $3 where reference = $1 and revision < $2`, [reference, revision, at, ...values]);
    switch (event.type) {
      case 'TopUpInitiated':
        await context.query(
          `insert into ${table} (reference, organization_id, environment, rail, channel, status, initiated_kobo, revision, created_at, updated_at)
           values ($1, $2, $3, $4, $5, 'initiated', $6, $7, $8, $8) on conflict (reference) do nothing`,
          [reference, event.data.organizationId, event.data.environment, event.data.rail, event.data.channel, event.data.amountKobo, revision, at],
        );
        return;
      case 'TopUpPaid':
        await update(`status = 'paid', paid_kobo = $4, fees_kobo = $5, provider_transaction_id = $6, paid_at = $7`, [
          event.data.amountKobo,
          event.data.feesKobo,
          event.data.providerTransactionId,
          event.data.paidAt,
        ]);
        return;
      case 'TopUpCredited':
        await update(`status = 'credited', credited_kobo = $4`, [event.data.amountKobo]);
        return;
      case 'TopUpFailed':
        await update(`status = 'failed'`, []);
        return;
      case 'TopUpFlagged':
        await update(`status = 'flagged', flag_reason = $4`, [event.data.reason]);
        return;
      case 'TopUpResolved':
        // The flag's reason stays: the row shows what was wrong and, by its status, how it was settled.
        if (event.data.resolution === 'credit')
          await update(`status = 'paid', paid_kobo = $4, fees_kobo = $5, provider_transaction_id = $6, paid_at = $7`, [
            event.data.amountKobo,
            event.data.feesKobo,
            event.data.providerTransactionId,
            event.data.paidAt,
          ]);
        else await update(`status = 'dismissed'`, []);
        return;
      default: {
        const _exhaustive: never = event;
        throw new Error(`unknown top-up event ${(_exhaustive as { type: string }).type}`);
      }
    }
  }),
};

/**
 * One row per organization and environment, the stream's latest state: a request (for this customer
 * code), the account assigned, or the failure. A row applies an event of a later revision only.
 */
async function applyAccount(context: ProjectionContext, event: PaymentAccountEvent, revision: string): Promise<void> {
  const table = context.table(PAYMENT_ACCOUNTS_TABLE);
  const { customerCode, organizationId, environment, rail } = event.data;
  let row: { status: string; accountNumber: string | null; accountName: string | null; bankName: string | null };
  switch (event.type) {
    case 'DedicatedAccountRequested':
      row = { status: 'requested', accountNumber: null, accountName: null, bankName: null };
      break;
    case 'DedicatedAccountAssigned':
      row = { status: 'assigned', accountNumber: event.data.accountNumber, accountName: event.data.accountName, bankName: event.data.bankName };
      break;
    case 'DedicatedAccountAssignmentFailed':
      row = { status: 'failed', accountNumber: null, accountName: null, bankName: null };
      break;
    default: {
      const _exhaustive: never = event;
      throw new Error(`unknown payment account event ${(_exhaustive as { type: string }).type}`);
    }
  }
  await context.query(
    `insert into ${table} (customer_code, organization_id, environment, rail, status, account_number, account_name, bank_name, revision) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     on conflict (organization_id, environment) do update set customer_code = excluded.customer_code, rail = excluded.rail, status = excluded.status,
       account_number = excluded.account_number, account_name = excluded.account_name, bank_name = excluded.bank_name, revision = excluded.revision
     where ${table}.revision < excluded.revision`,
    [customerCode, organizationId, environment, rail, row.status, row.accountNumber, row.accountName, row.bankName, revision],
  );
}
