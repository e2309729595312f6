// The environment of every process the demo starts. Its registry asks for no token and its agents
// get the URL in $GHOSTWATCH_DEMO_URL, so none of them needs the user's registry credentials:
// HYPI_TOKEN, and HYPIVISOR_WS (which may carry ?token= or a password), are left out, so that a
// demo agent (or anything it runs) cannot leak or misuse them.

export const CREDENTIALS = ['HYPI_TOKEN', 'HYPIVISOR_WS'] as const;

export function childEnv(base: NodeJS.ProcessEnv, extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...extra };
  for (const name of CREDENTIALS) delete env[name];
  return env;
}
