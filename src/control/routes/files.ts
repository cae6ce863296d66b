import fastifyMultipart from '@fastify/multipart';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, notFound, ParlaError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { FileStorage } from '../../files/file-storage.js';
import {
  decodeUtf8,
  InvalidTextError,
  isTextLike,
  resolveMimetype,
} from '../../files/text-extraction.js';
import type { Doc, Resource } from '../../store/resource-store.js';
import { context, registerCrud } from '../crud.js';
import { IdParams } from '../schemas/common.js';
import {
  DEFAULT_FILE_PURPOSE,
  FileListQuery,
  FileUploadFields,
  UpdateFile,
  type FileDoc,
  type FilePurpose,
} from '../schemas/file.js';
import { validateBody } from '../validation.js';
import type { RouteDeps } from './index.js';

const TAGS = ['File'];
/** Non-file form fields: `purpose`, `metadata` and `name` need far less than this. */
const MAX_FIELD_BYTES = 64 * 1024;
const MAX_ORIGINAL_NAME = 255;

interface Upload {
  bytes: number;
  filename: string;
  mimetype: string;
}

/**
 * `/file`: multipart upload streamed to local disk, then text extraction after the response.
 * Multipart parsing is registered in a plugin of its own, so only these routes accept it.
 */
export async function registerFileRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const storage = new FileStorage(deps.filesDir);
  const files = deps.store.resources.files;
  const pending = new Set<Promise<void>>();

  await app.register(async (scope) => {
    await scope.register(fastifyMultipart, {
      throwFileSizeLimit: true,
      limits: {
        fileSize: deps.maxFileBytes,
        files: 1,
        fields: 8,
        parts: 10,
        fieldSize: MAX_FIELD_BYTES,
        headerPairs: 100,
      },
    });
    // Closing waits for extractions still running, so none outlives the store.
    scope.addHook('onClose', async () => {
      await Promise.allSettled([...pending]);
    });

    scope.post(
      '/file',
      { schema: { tags: TAGS, summary: 'Upload File', consumes: ['multipart/form-data'] } },
      async (request, reply) => {
        const orgId = request.orgId;
        const id = newId();
        const { upload, fields } = await receiveUpload(
          request,
          reply,
          storage,
          id,
          deps.maxFileBytes,
        );
        let created: Resource;
        try {
          const doc = fileDoc(deps.publicUrl, orgId, id, upload, fields);
          created = await files.create(orgId, doc, id);
        } catch (error) {
          await storage.remove(orgId, id);
          throw error;
        }
        // Deferred past this turn, by which the response is written; the client polls
        // GET /file/{id} for the outcome.
        const task = new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => extract(storage, deps, orgId, created, request.log))
          .finally(() => {
            pending.delete(task);
          });
        pending.add(task);
        return reply.code(201).send(created);
      },
    );

    scope.get(
      '/file/:id/content',
      { schema: { tags: TAGS, summary: 'Download File content', params: IdParams } },
      async (request, reply) => {
        const file = await findFile(request);
        const opened = await storage.openOriginal(file.orgId, file.id);
        if (opened === null) {
          throw new ParlaError('ERR_NOT_FOUND', `content of File with id ${file.id} not found`);
        }
        return reply
          .type(typeof file.mimetype === 'string' ? file.mimetype : 'application/octet-stream')
          .header('content-length', opened.bytes)
          .header(
            'content-disposition',
            contentDisposition(typeof file.originalName === 'string' ? file.originalName : 'file'),
          )
          .header('x-content-type-options', 'nosniff')
          .send(opened.stream);
      },
    );

    scope.get(
      '/file/:id/parsed-text',
      { schema: { tags: TAGS, summary: 'Download File parsed text', params: IdParams } },
      async (request, reply) => {
        const file = await findFile(request);
        const opened =
          file.parsedTextUrl === undefined ? null : await storage.openParsed(file.orgId, file.id);
        if (opened === null) {
          throw new ParlaError('ERR_NOT_FOUND', `File with id ${file.id} has no parsed text`);
        }
        return reply
          .type('text/plain; charset=utf-8')
          .header('content-length', opened.bytes)
          .header('x-content-type-options', 'nosniff')
          .send(opened.stream);
      },
    );

    registerCrud(scope, deps.store, {
      path: '/file',
      resource: 'files',
      label: 'File',
      createSchema: FileUploadFields,
      updateSchema: UpdateFile,
      listQuery: FileListQuery,
      paged: false,
      without: ['create'],
      listEquals: (query) => ({
        purpose: typeof query.purpose === 'string' ? query.purpose : undefined,
      }),
      afterDelete: (ctx, deleted) => storage.remove(ctx.orgId, deleted.id),
    });
  });

  async function findFile(request: FastifyRequest): Promise<Resource> {
    const ctx = context(request, deps.store);
    const { id } = request.params as { id: string };
    const file = await files.get(ctx.orgId, id);
    if (file === null) {
      throw notFound('File', id);
    }
    return file;
  }
}

/**
 * Reads the form: the one `file` part is streamed to disk as it arrives (the platform's SDK sends
 * it before `purpose` and `metadata`). On any failure nothing is left on disk.
 */
async function receiveUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  storage: FileStorage,
  id: string,
  maxFileBytes: number,
): Promise<{ upload: Upload; fields: Doc }> {
  if (!request.isMultipart()) {
    throw new ParlaError('ERR_UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be multipart/form-data');
  }
  const orgId = request.orgId;
  let upload: Upload | undefined;
  const fields: Record<string, string> = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          part.file.resume();
          throw badRequest(`property ${part.fieldname} should not exist`);
        }
        const bytes = await storage.writeOriginal(orgId, id, part.file);
        if (part.file.truncated) {
          throw tooLarge(maxFileBytes);
        }
        upload = { bytes, filename: part.filename, mimetype: part.mimetype };
        continue;
      }
      if (part.fieldname in fields) {
        throw badRequest(`${part.fieldname} must be given once`);
      }
      if (part.valueTruncated) {
        throw badRequest(`${part.fieldname} must be shorter than ${MAX_FIELD_BYTES} bytes`);
      }
      // A field sent as application/json arrives parsed; take it back to text for one code path.
      fields[part.fieldname] =
        typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
    }
  } catch (error) {
    await storage.remove(orgId, id);
    const translated = translateMultipartError(error, maxFileBytes);
    if (translated instanceof ParlaError && translated.statusCode === 413) {
      // The rest of an oversized body is not read; close the connection instead of draining it.
      void reply.header('connection', 'close');
    }
    throw translated;
  }
  if (upload === undefined) {
    throw badRequest('file should not be empty');
  }
  try {
    return { upload, fields: parseFields(fields) };
  } catch (error) {
    await storage.remove(orgId, id);
    throw error;
  }
}

/** Text fields → validated values: `metadata` must be the JSON text of an object. */
function parseFields(raw: Record<string, string>): Doc {
  const fields: Doc = { ...raw };
  if (raw.metadata !== undefined) {
    try {
      fields.metadata = JSON.parse(raw.metadata) as unknown;
    } catch {
      throw badRequest('metadata must be a JSON object');
    }
    const value = fields.metadata;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw badRequest('metadata must be a JSON object');
    }
  }
  return validateBody<Doc>(FileUploadFields, fields);
}

function tooLarge(maxFileBytes: number): ParlaError {
  return new ParlaError(
    'ERR_PAYLOAD_TOO_LARGE',
    `file must not be larger than ${maxFileBytes} bytes`,
  );
}

function translateMultipartError(error: unknown, maxFileBytes: number): unknown {
  if (error instanceof ParlaError) {
    return error;
  }
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge(maxFileBytes);
    case 'FST_FILES_LIMIT':
      return badRequest('only one file may be uploaded per request');
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return badRequest('the form has too many fields');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return badRequest('metadata must be a JSON object');
    default:
      break;
  }
  // Disk errors carry a syscall and stay server errors; anything else is a malformed body.
  if ((error as { syscall?: unknown }).syscall !== undefined) {
    return error;
  }
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return error;
  }
  return new ParlaError(
    'ERR_BAD_REQUEST',
    `malformed multipart body: ${error instanceof Error ? error.message : String(error)}`,
  );
}

function fileDoc(publicUrl: string, orgId: string, id: string, upload: Upload, fields: Doc): Doc {
  const originalName = cleanFilename(upload.filename);
  const key = FileStorage.key(orgId, id);
  const doc: FileDoc = {
    object: 'file',
    status: 'processing',
    name: typeof fields.name === 'string' ? fields.name : truncate(originalName, 40),
    originalName,
    bytes: upload.bytes,
    purpose: (fields.purpose as FilePurpose | undefined) ?? DEFAULT_FILE_PURPOSE,
    mimetype: resolveMimetype(upload.mimetype, originalName),
    key,
    path: key,
    bucket: 'local',
    url: `${publicUrl}/file/${id}/content`,
    metadata: (fields.metadata as Record<string, unknown> | undefined) ?? {},
  };
  return doc;
}

/**
 * Extracts text after the upload answered, then records the outcome. Never throws: a failure
 * marks the file `failed` (or is logged when even that cannot be recorded).
 */
async function extract(
  storage: FileStorage,
  deps: RouteDeps,
  orgId: string,
  file: Resource,
  log: FastifyBaseLogger,
): Promise<void> {
  const files = deps.store.resources.files;
  try {
    let outcome: Doc;
    try {
      outcome = await extractText(storage, deps.publicUrl, orgId, file);
    } catch (error) {
      if (!(error instanceof InvalidTextError)) {
        log.error({ err: error, fileId: file.id }, 'file text extraction failed');
      }
      outcome = {
        status: 'failed',
        failureReason: error instanceof InvalidTextError ? error.message : 'text extraction failed',
      };
    }
    const updated = await files.update(orgId, file.id, (current) => ({ ...current, ...outcome }));
    if (updated === null) {
      // Deleted while extracting: drop whatever was written since.
      await storage.remove(orgId, file.id);
    }
  } catch (error) {
    log.error({ err: error, fileId: file.id }, 'could not record file processing outcome');
  }
}

async function extractText(
  storage: FileStorage,
  publicUrl: string,
  orgId: string,
  file: Resource,
): Promise<Doc> {
  if (!isTextLike(String(file.mimetype), String(file.originalName))) {
    return { status: 'done' };
  }
  const opened = await storage.openOriginal(orgId, file.id);
  if (opened === null) {
    throw new Error('original content is missing');
  }
  const parsedTextBytes = await storage.writeParsed(orgId, file.id, decodeUtf8(opened.stream));
  return {
    status: 'done',
    parsedTextUrl: `${publicUrl}/file/${file.id}/parsed-text`,
    parsedTextBytes,
  };
}

/** The last path component, without control characters, at most 255 characters; or `file`. */
function cleanFilename(filename: string | undefined): string {
  const base = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean === '' ? 'file' : truncate(clean, MAX_ORIGINAL_NAME);
}

/** At most `max` code points (the unit maxLength counts), never splitting a surrogate pair. */
function truncate(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : points.slice(0, max).join('');
}

/** `attachment` with an ASCII fallback name and the exact name in RFC 5987 form. */
function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
