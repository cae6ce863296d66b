import type { FastifyInstance } from 'fastify';
import { badRequest, ParlaError } from '../../core/errors.js';
import type { Doc } from '../../store/resource-store.js';
import { mergePatch } from '../crud.js';
import { LimitQuery, Strict } from '../schemas/common.js';
import { ConversationNode, CreateWorkflow, UpdateWorkflow } from '../schemas/workflow.js';
import { validateBody } from '../validation.js';
import { registerCheckedCrud } from './assistants.js';
import type { RouteDeps } from './index.js';

function asDocs(value: unknown): Doc[] {
  return Array.isArray(value) ? (value as Doc[]) : [];
}

/** Validates every `conversation` node in full (filling its defaults), reporting all problems. */
export function validateConversationNodes(body: Doc): void {
  const problems: string[] = [];
  asDocs(body.nodes).forEach((node, index) => {
    if (node.type !== 'conversation') {
      return;
    }
    try {
      validateBody(ConversationNode, node, `nodes.${index}`);
    } catch (error) {
      if (!(error instanceof ParlaError)) {
        throw error;
      }
      problems.push(...(Array.isArray(error.details) ? error.details : [error.details]));
    }
  });
  if (problems.length > 0) {
    throw badRequest(problems);
  }
}

/** Node names are unique, edges join existing nodes, and at most one node starts. */
export function checkGraph(workflow: Doc): void {
  const problems: string[] = [];
  const names = new Set<string>();
  const nodes = asDocs(workflow.nodes);
  nodes.forEach((node, index) => {
    const name = String(node.name);
    if (names.has(name)) {
      problems.push(`nodes.${index}.name ${name} is used by another node`);
    }
    names.add(name);
  });
  if (nodes.filter((node) => node.isStart === true).length > 1) {
    problems.push('nodes must have at most one node with isStart true');
  }
  asDocs(workflow.edges).forEach((edge, index) => {
    for (const end of ['from', 'to'] as const) {
      const name = String(edge[end]);
      if (!names.has(name)) {
        problems.push(`edges.${index}.${end} names no node: ${name}`);
      }
    }
  });
  if (problems.length > 0) {
    throw badRequest(problems);
  }
}

export function registerWorkflowRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCheckedCrud(
    app,
    deps.store,
    {
      path: '/workflow',
      resource: 'workflows',
      label: 'Workflow',
      createSchema: CreateWorkflow,
      updateSchema: UpdateWorkflow,
      listQuery: Strict(LimitQuery),
      paged: false,
      prepareCreate: (_ctx, body) => {
        checkGraph(body);
        return body;
      },
      prepareUpdate: (_ctx, current, patch) => {
        const next = mergePatch(current, patch);
        checkGraph(next);
        return next;
      },
    },
    validateConversationNodes,
  );
}
