import type { FastifyInstance } from 'fastify';
import type { LiveCallControl } from '../../calls/call-engine.js';
import type { CallStarter } from '../../calls/call-starter.js';
import type { ModelProviderRegistry } from '../../providers/llm/model-provider.js';
import type { Store } from '../../store/store.js';
import { registerAssistantRoutes } from './assistants.js';
import { registerCallRoutes } from './calls.js';
import { registerCampaignRoutes } from './campaigns.js';
import { registerChatRoutes } from './chats.js';
import { registerCredentialRoutes } from './credentials.js';
import { registerFileRoutes } from './files.js';
import { registerKnowledgeBaseRoutes } from './knowledge-bases.js';
import { registerLogRoutes } from './logs.js';
import { registerPhoneNumberRoutes } from './phone-numbers.js';
import { registerSessionRoutes } from './sessions.js';
import { registerSquadRoutes } from './squads.js';
import { registerToolRoutes } from './tools.js';
import { registerWorkflowRoutes } from './workflows.js';

/** What route modules may use. */
export interface RouteDeps {
  store: Store;
  publicUrl: string;
  filesDir: string;
  maxFileBytes: number;
  callStarter: CallStarter;
  /** Live calls on this server (the control URL); absent when no engine runs. */
  liveCalls?: LiveCallControl;
  models?: ModelProviderRegistry;
}

export async function registerRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  registerAssistantRoutes(app, deps);
  registerCallRoutes(app, deps);
  registerCampaignRoutes(app, deps);
  registerChatRoutes(app, deps);
  registerCredentialRoutes(app, deps);
  await registerFileRoutes(app, deps);
  registerKnowledgeBaseRoutes(app, deps);
  registerLogRoutes(app, deps);
  registerPhoneNumberRoutes(app, deps);
  registerSessionRoutes(app, deps);
  registerSquadRoutes(app, deps);
  registerToolRoutes(app, deps);
  registerWorkflowRoutes(app, deps);
}
