import { Inject, Injectable } from '@nestjs/common';
import { PublicOrigin } from '../common/public-origin.js';

/** The console's pages as mails link to them, on the service's public origin. */
@Injectable()
export class ConsoleLinks {
  constructor(@Inject(PublicOrigin) private readonly publicOrigin: PublicOrigin) {}

  origin(): string {
    return this.publicOrigin.origin();
  }

  /** A page that needs no token: where a mail sends its reader to sign in or ask for a reset. */
  plainPage(path: 'login' | 'operator/login' | 'forgot-password'): string {
    return `${this.origin()}/console/${path}`;
  }

  page(path: 'verify-email' | 'reset-password' | 'accept-invitation', token: string): string {
    return `${this.origin()}/console/${path}?token=${encodeURIComponent(token)}`;
  }
}
