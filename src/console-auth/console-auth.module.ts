import { Module } from '@nestjs/common';
import { DataProtectionModule } from '../data-protection/data-protection.module.js';
import { AccountEvents } from './account-events.js';
import { AccountStore } from './accounts.js';
import { ConsoleGuard } from './console.guard.js';
import { ConsoleHousekeeping } from './housekeeping.js';
import { LegacyContactSealing } from './legacy-contacts.js';
import { LoginThrottle } from './login-throttle.js';
import { Outbox } from './outbox.js';
import { SecondFactorStore } from './second-factors.js';
import { Sessions } from './sessions.js';
import { Totp } from './totp.js';

/** The console's accounts, sessions, CSRF and roles (ConsoleGuard), sign-in throttling, TOTP and mail. */
@Module({
  imports: [DataProtectionModule],
  providers: [AccountEvents, AccountStore, Sessions, ConsoleGuard, LoginThrottle, Outbox, Totp, SecondFactorStore, ConsoleHousekeeping, LegacyContactSealing],
  exports: [AccountEvents, AccountStore, Sessions, ConsoleGuard, LoginThrottle, Outbox, Totp, SecondFactorStore, ConsoleHousekeeping, LegacyContactSealing],
})
export class ConsoleAuthModule {}
