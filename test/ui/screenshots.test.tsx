// Screenshots are product: the committed SVGs must be what the code renders now.
// After a UI change run `npm run screenshots`, look at them, and commit them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderScreen, SCREENS } from '../support/screens.js';

describe('screenshots', () => {
  it.each(SCREENS.map((s) => [s.name, s] as const))('%s is rendered deterministically and committed', async (name, screen) => {
    const svg = await renderScreen(screen);
    expect(await renderScreen(screen)).toBe(svg);
    const committed = readFileSync(new URL(`../../screenshots/${name}.svg`, import.meta.url), 'utf8');
    expect(svg, `screenshots/${name}.svg is stale: run npm run screenshots`).toBe(committed);
  });
});
