// `npm run screenshots`: writes screenshots/*.svg (run by vitest so it shares the TS setup).
import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { renderScreen, SCREENS } from './screens.js';

it('writes every screen', async () => {
  for (const screen of SCREENS) {
    writeFileSync(new URL(`../../screenshots/${screen.name}.svg`, import.meta.url), await renderScreen(screen));
  }
});
