export interface Figure {
  /** null: not measurable on this machine (printed as n/a, `null` in --json). */
  readonly value: number | null;
  readonly unit: string;
  /** The target, for the readable table. */
  readonly target?: string;
}
export type Figures = Record<string, Figure>;

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
