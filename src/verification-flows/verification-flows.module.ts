import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { AuthModule } from '../auth/auth.module.js';
import { FaceChecks } from '../face-checks/face-checks.port.js';
import { HumanFaceChecks } from '../face-checks/human-face-checks.js';
import { PortraitsModule } from '../portraits/portraits.module.js';
import { VerificationsModule } from '../verifications/verifications.module.js';
import { AdminVerificationSessionsController } from './admin-verification-sessions.controller.js';
import { ConsoleAuthModule } from '../console-auth/console-auth.module.js';
import { ConsoleVerificationFlowsController } from './console-verification-flows.controller.js';
import { HostedPageController } from './hosted-page.controller.js';
import { HostedSessionController } from './hosted-session.controller.js';
import { VerificationFlowsController } from './verification-flows.controller.js';
import { VerificationFlows } from './verification-flows.service.js';
import { VerificationSessions } from './verification-sessions.service.js';
import { SessionExpirySweep } from './session-expiry.js';

/** Verification flows and sessions: the integrator's API, the hosted page, the browser's calls on one session, the consoles' pages and the admin API's review. */
@Module({
  imports: [CqrsModule, AuthModule, VerificationsModule, PortraitsModule, ConsoleAuthModule],
  controllers: [VerificationFlowsController, HostedSessionController, HostedPageController, AdminVerificationSessionsController, ConsoleVerificationFlowsController],
  providers: [ApiKeyGuard, VerificationFlows, VerificationSessions, SessionExpirySweep, { provide: FaceChecks, useClass: HumanFaceChecks }],
  exports: [VerificationFlows, VerificationSessions, SessionExpirySweep],
})
export class VerificationFlowsModule {}
