import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { listeningOrigin } from '../portraits/portraits.service.js';

/**
 * The console's address in mails: PUBLIC_BASE_URL, else the address this process listens on.
 * Never the request's Host header, which a caller could set to any host to have links sent there.
 */
@Injectable()
export class ConsoleLinks {
  constructor(
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(HttpAdapterHost) private readonly http: HttpAdapterHost,
  ) {}

  origin(): string {
    const configured = this.config.portraits.publicBaseUrl;
    if (configured !== undefined) return configured.replace(/\/+$/, '');
    const address = this.http.httpAdapter?.getHttpServer()?.address() as AddressInfo | string | null | undefined;
    if (typeof address !== 'object' || address === null) return `http://localhost:${this.config.port}`;
    return listeningOrigin(address);
  }

  page(path: 'verify-email' | 'reset-password' | 'accept-invitation', token: string): string {
    return `${this.origin()}/console/${path}?token=${encodeURIComponent(token)}`;
  }
}
