import { Type } from '@sinclair/typebox';
import { AssistantHook, Model, Transcriber, Voice, sharedPlanProperties } from './assistant.js';
import { AnyObject, ForUpdate, Metadata, Opt, Strict } from './common.js';

export const NodeName = Type.String({ minLength: 1, maxLength: 80 });

/** The fully specified node kind; validated per node by the workflow routes. */
export const ConversationNode = Strict({
  type: Type.Literal('conversation'),
  name: NodeName,
  model: Opt(Model),
  transcriber: Opt(Transcriber),
  voice: Opt(Voice),
  prompt: Opt(Type.String()),
  tools: Opt(Model.properties.tools),
  toolIds: Opt(Type.Array(Type.String())),
  globalNodePlan: Opt(Strict({ enabled: Opt(Type.Boolean()), enterCondition: Opt(Type.String()) })),
  variableExtractionPlan: Opt(
    Strict({
      schema: Opt(AnyObject),
      aliases: Opt(Type.Array(Strict({ key: Type.String(), value: Type.String() }))),
    }),
  ),
  isStart: Opt(Type.Boolean()),
  metadata: Opt(Metadata),
});

/** Any node: node kinds other than `conversation` are not specified and keep their fields. */
export const WorkflowNode = Type.Object(
  { type: Type.String({ minLength: 1 }), name: NodeName },
  {
    additionalProperties: true,
    description: 'A node; `conversation` nodes are validated as ConversationNode',
  },
);

export const Edge = Strict({
  from: NodeName,
  to: NodeName,
  condition: Opt(Strict({ type: Type.Literal('ai'), prompt: Type.String() })),
  metadata: Opt(Metadata),
});

export const CreateWorkflow = Strict({
  name: Type.String({ minLength: 1, maxLength: 80 }),
  nodes: Type.Array(WorkflowNode),
  edges: Opt(Type.Array(Edge)),
  ...sharedPlanProperties,
  model: Opt(Model),
  globalPrompt: Opt(Type.String()),
  hooks: Opt(Type.Array(AssistantHook)),
  maxDurationSeconds: Opt(Type.Number({ minimum: 10, maximum: 43200 })),
});

export const UpdateWorkflow = ForUpdate(CreateWorkflow);
