import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** OpenAPI schemas only: the handlers validate with validateSubject (verification-inputs.ts). */

export class DataSubjectDto {
  @ApiPropertyOptional({ description: '11-digit NIN', example: '12345678905' }) nin?: string;
  @ApiPropertyOptional({ description: '11-digit BVN', example: '22345678905' }) bvn?: string;
  @ApiPropertyOptional({ description: '080XXXXXXXX, +234XXXXXXXXXX or 234XXXXXXXXXX (the three forms find the same verifications)', example: '08031234565' }) phone?: string;
  @ApiPropertyOptional({ description: '10-digit NUBAN', example: '0123456785' }) account_number?: string;
  @ApiPropertyOptional({ description: '16 letters and digits', example: 'AB12CD34EF56GH75' }) vnin?: string;
  @ApiPropertyOptional({ description: "19-character VIN of a voter's card", example: '90F5B0407E295593885' }) vin?: string;
  @ApiPropertyOptional({ description: 'a letter and 8 digits', example: 'A12345675' }) passport_number?: string;
}

export class SubjectReferencesDto {
  @ApiProperty({ type: [String], example: ['vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR'], description: 'at most 500 per call' }) references!: string[];
}

export class SubjectReferencesEnvelopeDto {
  @ApiProperty({ example: true }) status!: boolean;
  @ApiProperty({ type: SubjectReferencesDto }) data!: SubjectReferencesDto;
}

export class SubjectErasureDto {
  @ApiProperty({ type: [String], description: 'the verifications erased (now, or before and still found); at most 500 per call: call again until empty' }) references!: string[];
  @ApiProperty({ type: [String], description: 'verifications of the subject still running, not erased: erase them once finished' }) pending!: string[];
}

export class SubjectErasureEnvelopeDto {
  @ApiProperty({ example: true }) status!: boolean;
  @ApiProperty({ type: SubjectErasureDto }) data!: SubjectErasureDto;
}
