import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { RUNTIME, type Runtime } from '../config/runtime.js';
import type { CommandContext } from '../common/event.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { READY_MADE_PEOPLE, sandboxPerson } from '../scopes/sandbox-world.js';
import { SCOPES } from '../scopes/scopes.js';
import { IssueApiKeyHandler } from './api-key.handlers.js';
import { ApproveOrganization, IssueApiKey, RegisterOrganization, SetActiveScopes } from './organization.commands.js';
import { ApproveOrganizationHandler, type OrganizationHandler, SetActiveScopesHandler } from './organization-lifecycle.handlers.js';
import { RegisterOrganizationHandler } from './register-organization.handler.js';
import { OrganizationStore } from './organization.store.js';

export const DEMO_ORGANIZATION_NAME = 'Demo organization';
const FIRST_RUN: CommandContext = { correlationId: 'first-run', actor: { type: 'system', id: 'first-run' } };
/** The commands answer from the stream; the projections are waited for once, before the key is printed. */
const NO_WAIT = { projectionWaitMs: 0 };
const PROJECTIONS_WAIT_MS = 10_000;

/**
 * On the embedded default with an empty event log, a newcomer gets a demo organization (approved,
 * every scope active, sandbox credit) and a test key printed once with a ready-to-paste curl.
 * Never outside the embedded default: a real installation starts empty.
 *
 * The key and the curl are printed for a person at a terminal only, outside the JSON log. When
 * stdout is not a terminal (a log collector, a file) one log line says what was created, without
 * the key, and how to issue another.
 */
@Injectable()
export class FirstRun implements OnApplicationBootstrap {
  private readonly logger = new Logger('FirstRun');

  constructor(
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    // The handlers themselves rather than the CommandBus, which registers its handlers in its own bootstrap hook.
    @Inject(RegisterOrganizationHandler) private readonly register: RegisterOrganizationHandler,
    @Inject(ApproveOrganizationHandler) private readonly approve: OrganizationHandler<ApproveOrganization>,
    @Inject(SetActiveScopesHandler) private readonly setScopes: OrganizationHandler<SetActiveScopes>,
    @Inject(IssueApiKeyHandler) private readonly issueKey: IssueApiKeyHandler,
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Optional() @Inject(HttpAdapterHost) private readonly http?: HttpAdapterHost,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.runtime.embedded) return;
    if ((await this.store.headPosition()) !== 0n) return;
    const organization = await this.register.execute(new RegisterOrganization({ name: DEMO_ORGANIZATION_NAME, email: 'demo@example.com' }, FIRST_RUN, NO_WAIT));
    await this.approve.execute(new ApproveOrganization(organization.id, FIRST_RUN, NO_WAIT));
    await this.setScopes.execute(new SetActiveScopes(organization.id, SCOPES, FIRST_RUN, NO_WAIT));
    const key = await this.issueKey.execute(new IssueApiKey(organization.id, { environment: 'test', name: 'Demo key', scopes: null }, FIRST_RUN, NO_WAIT));
    // The newest event committed (readAll waits for everything committed before it; the head alone
    // can still be held below the key by a transaction open elsewhere).
    const [newest] = await this.store.readAll({ direction: 'backwards', maxCount: 1 });
    const written = newest?.position ?? 0n;
    // The key works once the api-keys projection has it: print it then, so the curl answers 201 at once.
    const print = async (port: number) => {
      await this.organizations.waitForProjections(written, PROJECTIONS_WAIT_MS);
      if (process.stdout.isTTY !== true) {
        this.logger.log(
          `First run: created "${DEMO_ORGANIZATION_NAME}" (${organization.id}), approved, every scope active, with sandbox credit, and its test API key ${key.id}. ` +
            'The key is shown only on a terminal and cannot be shown again (the service keeps a hash): ' +
            `issue another with "npm run admin -- key issue ${organization.id} --env test". Sandbox identities: docs/sandbox.md`,
        );
        return;
      }
      process.stdout.write(
        [
          '',
          `First run: created "${DEMO_ORGANIZATION_NAME}" (${organization.id}), approved, every scope active, with sandbox credit.`,
          'Its test API key, shown this once only (the service keeps a hash):',
          `  ${key.key}`,
          'Try it:',
          `  curl -s -X POST http://localhost:${port}/v1/nin -H 'X-Service-Key: ${key.key}' -H 'Content-Type: application/json' -d '{"nin":"${sandboxPerson(READY_MADE_PEOPLE[0]).nin}"}'`,
          'More sandbox identities, and what each check returns for them: docs/sandbox.md',
          '',
          '',
        ].join('\n'),
      );
    };
    // Bootstrap runs before the server listens: print once it does, with the port it really got.
    const server = this.http?.httpAdapter?.getHttpServer() as Server | undefined;
    if (server === undefined || server.listening) {
      await print(this.listeningPort(server));
      return;
    }
    server.once('listening', () => void print(this.listeningPort(server)));
  }

  private listeningPort(server: Server | undefined): number {
    const address = server?.address();
    return typeof address === 'object' && address !== null ? address.port : this.runtime.config.port;
  }
}
