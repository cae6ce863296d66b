/** The numeric fields of a metrics message's `latency` (at most 20), or null. */
export function stageRecord(value: unknown): Record<string, number> | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return null;
  }
  const stages: Record<string, number> = {};
  let count = 0;
  for (const [name, ms] of Object.entries(value)) {
    if (typeof ms === 'number' && Number.isFinite(ms) && name.length <= 64 && count < 20) {
      stages[name] = ms;
      count++;
    }
  }
  return count > 0 ? stages : null;
}
