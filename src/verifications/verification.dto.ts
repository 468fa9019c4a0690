import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PagingMetaDto } from '../common/api.dto.js';
import { FAILURE_REASONS } from './failure-reason.js';

/** OpenAPI schemas only: the handlers validate with verification-inputs.ts, these describe the same shapes. */

export class VerificationDto {
  @ApiProperty({ example: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', description: '`vrf_` + a 26-character ULID (sortable by creation time)' })
  reference!: string;
  @ApiProperty({ example: 'nin', enum: ['nin', 'pnv', 'vnin', 'bvn', 'pvc', 'passport', 'bank_account', 'premium_bank_account', 'phone', 'face_match'] })
  scope!: string;
  @ApiProperty({ example: 'kyc' })
  category!: string;
  @ApiProperty({ example: 'NG' })
  countryCode!: string;
  @ApiProperty({ enum: ['found', 'not_found', 'failed', 'pending'], description: '`pending` only while the check is still running' })
  status!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The inputs as submitted (face_match: the image as {contentType, sizeBytes, sha256}, never the bytes)' })
  request!: Record<string, unknown>;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Shaped by the scope; {} when nothing was found. Portraits (nin, pnv, bvn) appear as `portraitUrl`, a signed link served by GET /v1/portraits/{id} until `portraitUrlExpiresAt`. face_match: {match: boolean, confidence: number (0-100)}.',
  })
  result!: Record<string, unknown>;
  @ApiProperty({ type: String, nullable: true })
  errorMessage!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: [...FAILURE_REASONS, null],
    example: null,
    description:
      'Why a failed check failed; null unless status is failed. provider_timeout: no answer within the deadline; provider_unavailable: the provider unreachable, answering that it is down, or not called because its circuit breaker is open; provider_error: any other provider failure; insufficient_balance: refused with 402 before any call; internal_error: the service could not finish the check.',
  })
  failureReason!: string | null;
  @ApiProperty({ example: 10000 })
  priceKobo!: number;
  @ApiProperty({ description: 'true exactly for found and not_found' })
  charged!: boolean;
  @ApiProperty({ example: '2026-11-22T07:15:00.123+00:00' })
  createdAt!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'When the personal data of this verification (request and result) was erased; null while it is readable. Once erased, request and result are {}.',
  })
  personalDataErasedAt!: string | null;
}

export class VerificationSummaryDto {
  @ApiProperty() reference!: string;
  @ApiProperty() scope!: string;
  @ApiProperty({ enum: ['found', 'not_found', 'failed', 'pending'] }) status!: string;
  @ApiProperty() priceKobo!: number;
  @ApiProperty() charged!: boolean;
  @ApiProperty({ example: '2026-11-22T07:15:00.123+00:00' }) createdAt!: string;
}

export class VerificationEnvelopeDto {
  @ApiProperty({ example: true }) status!: boolean;
  @ApiProperty({ type: VerificationDto }) data!: VerificationDto;
}

export class VerificationListEnvelopeDto {
  @ApiProperty({ example: true }) status!: boolean;
  @ApiProperty({ type: [VerificationSummaryDto] }) data!: VerificationSummaryDto[];
  @ApiProperty({ type: PagingMetaDto }) meta!: PagingMetaDto;
}

/** The union of every scope's inputs; each scope takes only its own (see the description). */
export class VerificationInputsDto {
  @ApiPropertyOptional({ description: 'nin, face_match: 11-digit NIN', example: '12345678905' }) nin?: string;
  @ApiPropertyOptional({ description: 'bvn, face_match: 11-digit BVN', example: '22345678905' }) bvn?: string;
  @ApiPropertyOptional({ description: 'pnv, phone: 080XXXXXXXX, +234XXXXXXXXXX or 234XXXXXXXXXX', example: '08031234565' }) phone?: string;
  @ApiPropertyOptional({ description: 'vnin: 16 letters and digits', example: 'AB12CD34EF56GH75' }) vnin?: string;
  @ApiPropertyOptional({ description: "pvc: 19-character VIN of a voter's card", example: '90F5B0407E295593885' }) vin?: string;
  @ApiPropertyOptional({ description: 'passport: a letter and 8 digits', example: 'A12345675' }) passport_number?: string;
  @ApiPropertyOptional({ description: 'bank_account (required), premium_bank_account (optional): bank code or identifier', example: '058' }) bank?: string;
  @ApiPropertyOptional({ description: 'bank_account, premium_bank_account: 10-digit NUBAN', example: '0123456785' }) account_number?: string;
  @ApiPropertyOptional({ description: 'face_match: base64 (or data URL) of a JPEG or PNG, at most 1 MiB decoded, compared against the portrait on file for nin or bvn (give exactly one)' })
  image?: string;
}
