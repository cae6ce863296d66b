import fastifySwagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import type { LiveCallControl } from '../calls/call-engine.js';
import type { CallStarter } from '../calls/call-starter.js';
import { NoTransportCallStarter } from '../calls/call-starter.js';
import type { ModelProviderRegistry } from '../providers/llm/model-provider.js';
import type { Store } from '../store/store.js';
import { registerAuth } from './auth.js';
import { ParlaError } from '../core/errors.js';
import { errorBody, handleError } from './errors.js';
import { checkStrings, parseJsonBody } from './json-body.js';
import { registerRequestLog } from './request-log.js';
import { registerRoutes } from './routes/index.js';
import { bodyAjv, queryAjv } from './validation.js';

export interface AppOptions {
  store: Store;
  /** Base of URLs the API returns (file URLs, websocket URLs). */
  publicUrl: string;
  /** Where uploaded files are kept. */
  filesDir: string;
  maxFileBytes?: number;
  bodyLimitBytes?: number;
  callStarter?: CallStarter;
  /** Live calls for `monitor.controlUrl` (the call engine). */
  liveCalls?: LiveCallControl;
  models?: ModelProviderRegistry;
  logger?: boolean | { level: string };
}

/** Builds the control plane (not listening): tests use `inject()`, main.ts calls `listen()`. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimitBytes ?? 1024 * 1024,
    // Requests are recorded in the org's log store; the process log keeps errors only.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: false,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors Fastify raises before routing (e.g. an over-long path parameter) use our body too.
    frameworkErrors: (error, _request, reply) => {
      const status = error.statusCode === 414 ? 404 : (error.statusCode ?? 400);
      void (reply as FastifyReply)
        .code(status)
        .send(errorBody(status, status === 404 ? 'Not Found' : error.message));
    },
  });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema),
  );
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    void reply
      .code(404)
      .send(errorBody(404, `Cannot ${request.method} ${request.url.split('?')[0]}`));
  });
  // DELETE with `Content-Type: application/json` and an empty body is common from SDKs.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(typeof body === 'string' ? body : body.toString('utf8')));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  // Path parameters and query strings reach SQL too: refuse what PostgreSQL cannot store.
  app.addHook('preValidation', (request, _reply, done) => {
    const problem = checkStrings(request.params, 0) ?? checkStrings(request.query, 0);
    done(problem === null ? undefined : new ParlaError('ERR_VALIDATION', [problem]));
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Parla API',
        version: '1',
        description: 'Control API of the Parla voice-AI media server',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });

  registerAuth(app, options.store);
  registerRequestLog(app, options.store.logs);
  await registerRoutes(app, {
    store: options.store,
    publicUrl: options.publicUrl.replace(/\/+$/, ''),
    filesDir: options.filesDir,
    maxFileBytes: options.maxFileBytes ?? 50 * 1024 * 1024,
    callStarter: options.callStarter ?? new NoTransportCallStarter(),
    ...(options.liveCalls !== undefined ? { liveCalls: options.liveCalls } : {}),
    ...(options.models !== undefined ? { models: options.models } : {}),
  });

  app.get('/openapi.json', { config: { public: true, noLog: true }, schema: { hide: true } }, () =>
    app.swagger(),
  );
  app.get('/health', { config: { public: true, noLog: true }, schema: { hide: true } }, () => ({
    status: 'ok',
  }));
  return app;
}
