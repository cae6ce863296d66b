import { Type } from '@sinclair/typebox';
import { LimitQuery, Metadata, Name40, Opt, Strict, StringEnum } from './common.js';

export const FILE_PURPOSES = ['assistant', 'composer-attachment', 'knowledge-base-v2'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** Uploads that name no purpose are kept for assistants (the platform's original use of files). */
export const DEFAULT_FILE_PURPOSE: FilePurpose = 'assistant';

export const FilePurposeSchema = StringEnum(FILE_PURPOSES);

/**
 * The non-file fields of `POST /file` once `metadata` has been parsed from its JSON text.
 * Unknown fields are rejected as in JSON bodies.
 */
export const FileUploadFields = Strict({
  purpose: Opt(FilePurposeSchema),
  name: Opt(Name40),
  metadata: Opt(Metadata),
});

export const UpdateFile = Strict({
  name: Opt(Name40),
  metadata: Opt(Metadata),
});

/** `purpose` is free text here: an unknown purpose matches nothing rather than failing. */
export const FileListQuery = Strict({
  purpose: Opt(Type.String({ maxLength: 100 })),
  ...LimitQuery,
});

export type FileStatus = 'processing' | 'done' | 'failed';

/** The stored document of a file (the API adds id, orgId, createdAt and updatedAt). */
export interface FileDoc {
  [key: string]: unknown;
  object: 'file';
  status: FileStatus;
  name: string;
  originalName: string;
  bytes: number;
  purpose: FilePurpose;
  mimetype: string;
  /** Storage key, relative to the files directory: `<orgId>/<fileId>/original`. */
  key: string;
  /** The same key: Parla never reveals absolute paths on its disk. */
  path: string;
  bucket: 'local';
  url: string;
  metadata: Record<string, unknown>;
  parsedTextUrl?: string;
  parsedTextBytes?: number;
  /** Why processing ended `failed` (Parla's own field; the platform does not show one). */
  failureReason?: string;
}
