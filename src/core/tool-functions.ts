type Doc = Record<string, unknown>;

const EMPTY_PARAMETERS = { type: 'object', properties: {}, required: [] as string[] };

/** The function a model sees for the built-in kinds when the tool gives none. */
export function defaultToolFunction(tool: Doc): Doc | undefined {
  switch (tool.type) {
    case 'endCall':
      return { name: 'endCall', description: 'End the call.', parameters: EMPTY_PARAMETERS };
    case 'dtmf':
      return {
        name: 'dtmf',
        description: 'Press keys on the keypad of the phone call.',
        parameters: {
          type: 'object',
          properties: { keys: { type: 'string', description: 'The keys to press, e.g. 123#' } },
          required: ['keys'],
        },
      };
    case 'transferCall': {
      const destinations = Array.isArray(tool.destinations) ? (tool.destinations as Doc[]) : [];
      const targets = destinations
        .map((d) => d.number ?? d.sipUri ?? d.assistantName)
        .filter((t): t is string => typeof t === 'string');
      return {
        name: 'transferCall',
        description: 'Transfer the call to one of the destinations.',
        parameters: {
          type: 'object',
          properties: {
            destination: {
              type: 'string',
              enum: targets,
              description: 'Where to transfer the call',
            },
          },
          required: ['destination'],
        },
      };
    }
    default:
      return undefined;
  }
}

/** The tool with the function a model sees (its own, or the default of its kind). */
export function withDefaultFunction(tool: Doc): Doc {
  if (tool.function !== undefined) {
    return tool;
  }
  const fn = defaultToolFunction(tool);
  return fn === undefined ? tool : { ...tool, function: fn };
}
