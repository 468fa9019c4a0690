import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AddressInfo, Server } from 'node:net';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';

/**
 * The service's own address for the links it hands out (mails, portrait links, payment returns,
 * hosted pages): PUBLIC_BASE_URL, else the address this process listens on. Never a request's Host
 * header, which a caller could set to any host to have links sent there.
 */
@Injectable()
export class PublicOrigin {
  private listening: string | undefined;

  constructor(
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(HttpAdapterHost) private readonly http: HttpAdapterHost,
  ) {}

  /** `https://ledger.example` or `http://127.0.0.1:3000`: no trailing slash. */
  origin(): string {
    const configured = this.config.portraits.publicBaseUrl;
    if (configured !== undefined) return configured.replace(/\/+$/, '');
    if (this.listening !== undefined) return this.listening;
    const address = (this.http.httpAdapter?.getHttpServer() as Server | undefined)?.address();
    // Not listening yet: the configured port on this host; not remembered, the real address comes once listening.
    if (typeof address !== 'object' || address === null) return `http://localhost:${this.config.port}`;
    this.listening = listeningOrigin(address);
    return this.listening;
  }
}

/** `http://` and the listening address; an unspecified address (every interface) is reached on loopback. */
export function listeningOrigin(address: AddressInfo): string {
  let host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  if (address.address === '0.0.0.0') host = '127.0.0.1';
  if (address.address === '::') host = 'localhost';
  return `http://${host}:${address.port}`;
}
