import { describe, expect, it } from '@jest/globals';
import { SystemClock } from '../common/clock.js';
import { RandomIdGenerator } from '../common/ids.js';
import { streamEvents, useTestEventStore } from '../../test/support/event-store.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../../test/support/data-protection.js';
import { ContactData } from '../data-protection/contact-data.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { LocalKeyManagement } from '../data-protection/key-management.port.js';
import { AccountEvents, type ConsoleAccountEvent } from './account-events.js';
import { AccountStore, EmailTaken } from './accounts.js';
import { consoleId } from './tokens.js';

const CONTEXT = { correlationId: 'req-account-events', actor: { type: 'operator' as const, id: 'cli' } };

/** The row and its event kept together, on the real PostgreSQL and this project's event store. */
describe('AccountEvents.record', () => {
  const test = useTestEventStore({ poolSize: 4 });
  const parts = () => ({
    events: new AccountEvents(test.pool, test.store, new RandomIdGenerator(), new SystemClock()),
    accounts: new AccountStore(test.pool, new ContactData(new DataKeys(test.pool, new LocalKeyManagement(Buffer.from(TEST_DATA_ENCRYPTION_KEY, 'base64'))), test.pool)),
  });
  const created = (userId: string): ConsoleAccountEvent => ({ type: 'ConsoleOperatorCreated', data: { schemaVersion: 1, userId, role: 'auditor', via: 'cli' } });
  const insert = (accounts: AccountStore, userId: string, email: string, db: Parameters<AccountStore['insert']>[1]) =>
    accounts.insert({ id: userId, kind: 'operator', organizationId: null, email, role: 'auditor', passwordHash: null, emailVerifiedAt: null, createdAt: new Date() }, db);

  it('commits the row once its event is appended, with the context as metadata', async () => {
    const { events, accounts } = parts();
    const userId = consoleId('usr');
    await events.record(CONTEXT, async (db) => ({ value: await insert(accounts, userId, `${userId}@example.org`, db), events: [created(userId)] }));
    expect(await accounts.byId(userId)).toMatchObject({ id: userId, role: 'auditor' });
    const stored = await streamEvents(test.store, `consoleUser-${userId}`);
    expect(stored.map((event) => [event.type, event.metadata.actor, event.metadata.correlationId])).toEqual([['ConsoleOperatorCreated', CONTEXT.actor, CONTEXT.correlationId]]);
  });

  it('rolls the row back when the store refuses the append', async () => {
    const { events, accounts } = parts();
    const userId = consoleId('usr');
    // A type the store refuses ($-types are the store's own): the append fails after the row was written.
    const refused = { type: '$Refused', data: { schemaVersion: 1, userId } } as unknown as ConsoleAccountEvent;
    await expect(events.record(CONTEXT, async (db) => ({ value: await insert(accounts, userId, `${userId}@example.org`, db), events: [refused] }))).rejects.toThrow(RangeError);
    expect(await accounts.byId(userId)).toBeUndefined();
    expect(await streamEvents(test.store, `consoleUser-${userId}`)).toEqual([]);
  });

  it('appends nothing when the rows refuse the change', async () => {
    const { events, accounts } = parts();
    const first = consoleId('usr');
    const email = `${first}@example.org`;
    await events.record(CONTEXT, async (db) => ({ value: await insert(accounts, first, email, db), events: [created(first)] }));
    const second = consoleId('usr');
    await expect(events.record(CONTEXT, async (db) => ({ value: await insert(accounts, second, email.toUpperCase(), db), events: [created(second)] }))).rejects.toThrow(EmailTaken);
    expect(await streamEvents(test.store, `consoleUser-${second}`)).toEqual([]);
    // The pool's connections came back usable.
    expect(await accounts.byId(first)).toBeDefined();
  });
});
