// The monitor screen. It renders the engine's snapshot and the view state; it owns no data.
// Frame: header, column titles, rows, a status line, the footer — never taller than the pane.
import { Box, Text, useInput } from 'ink';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { findingKey } from '../core/evict-plan.js';
import { sanitize } from '../core/sanitize.js';
import { staleOf, type Engine, type EngineSnapshot, type EvictProgress, type EvictSummary } from '../engine/types.js';
import { STATUS_TRAITS } from '../sources/types.js';
import { columnsFor, layoutColumns, type CellContext } from './columns.js';
import { Confirm } from './components/confirm.js';
import { Footer } from './components/footer.js';
import { Header, headerHeight, headerTicks } from './components/header.js';
import { Panel } from './components/panel.js';
import { Table, TitleLine } from './components/table.js';
import { detailLines, helpLines } from './detail.js';
import { useEngineSnapshot, useMinuteClock, useSecondTicks, useTerminalSize, type Size } from './hooks.js';
import { idShortener } from './ids.js';
import { commandFor } from './keymap.js';
import { visibleRows } from './rows.js';
import { fit, formatAge } from './text.js';
import { initialViewState, reduce, type Action, type Context, type Effect, type ViewState } from './view-state.js';

export interface AppProps {
  readonly engine: Engine;
  readonly readOnly?: boolean;
  readonly home?: string | undefined;
  readonly now?: () => number;
  /** A fixed size instead of the terminal's (tests, screenshots). */
  readonly size?: Size;
  readonly onQuit: () => void;
  readonly initialState?: Partial<ViewState>;
}

/** Smallest pane the table is drawn in; below it, one line says so. */
export const MIN_COLUMNS = 40;
export const MIN_ROWS = 6;
/** Titles, status line, footer; the header's height comes on top. */
const CHROME = 3;

export function App({ engine, readOnly = false, home, now = Date.now, size: fixedSize, onQuit, initialState }: AppProps) {
  const snap = useEngineSnapshot(engine);
  const size = useTerminalSize(fixedSize);
  const minute = useMinuteClock(now);
  const [state, setState] = useState<ViewState>(() => ({ ...initialViewState, ...initialState }));
  const [progress, setProgress] = useState<EvictProgress | undefined>();

  // One spare line: a frame as tall as the pane makes Ink clear the whole screen on each change.
  const height = size.rows - 1;
  const width = size.columns;
  const headerLines = headerHeight(snap.sources.length, size.rows);
  const bodyHeight = Math.max(1, height - CHROME - headerLines);

  const clockOffsetMs = useMemo(() => Object.fromEntries(snap.sources.map((s) => [s.name, s.clockOffsetMs])), [snap.sources]);
  const ctxCells: CellContext = useMemo(() => ({ now: minute, home, clockOffsetMs }), [minute, home, clockOffsetMs]);
  const rows = useMemo(
    () => visibleRows(snap.findings, state, ctxCells),
    // Sorting by age depends on the clock; everything else only on the findings and the query.
    [snap.findings, state.tab, state.filter, state.problemsOnly, state.sortColumn, state.sortReverse, ctxCells],
  );
  const placed = useMemo(() => layoutColumns(columnsFor(state.tab), width), [state.tab, width]);
  // Ids cut so that the rows shown tell apart (UUIDv7 ids share their start).
  const tableCtx: CellContext = useMemo(
    () => ({
      ...ctxCells,
      shortId: idShortener(rows.map((f) => sanitize(f.id, 128))),
      shortHolder: idShortener(rows.map((f) => sanitize((f.kind === 'claim' ? f.holder : undefined) ?? '-', 128))),
    }),
    [ctxCells, rows],
  );
  const detailFinding = state.mode === 'detail' ? snap.findings.find((f) => findingKey(f) === state.detailKey) : undefined;
  // Ages in the detail view and a retry countdown in the header tick; nothing else does.
  const tickNow = useSecondTicks((state.mode === 'detail' && detailFinding !== undefined) || headerTicks(snap.sources), now);
  const overlay = useMemo(() => {
    if (state.mode === 'help') return helpLines();
    if (state.mode === 'detail' && detailFinding) {
      const pid = detailFinding.entry.pid;
      return detailLines(detailFinding, tickNow, typeof pid === 'number' ? engine.processInfo(pid) : undefined, clockOffsetMs[detailFinding.source]);
    }
    return undefined;
  }, [state.mode, detailFinding, engine, tickNow, clockOffsetMs]);

  const ctx: Context = { rows, all: snap.findings, pageSize: bodyHeight, readOnly, detailLines: overlay?.length ?? 0 };
  const latest = useRef({ state, ctx });
  latest.current = { state, ctx };

  const runEffect = useCallback(
    (effect: Effect | undefined) => {
      if (!effect) return;
      if (effect.type === 'quit') onQuit();
      else if (effect.type === 'refresh') {
        void engine.refresh().then(() => dispatch({ type: 'message', text: 'refreshed', tone: 'info' }));
      } else {
        void engine
          .evict({ selection: effect.selection, force: effect.force, onProgress: setProgress })
          .then((summary) => {
            setProgress(undefined);
            dispatch({ type: 'evicted', ...summaryText(summary) });
          })
          .catch((error: unknown) => {
            setProgress(undefined);
            dispatch({ type: 'evicted', text: `eviction stopped: ${sanitize((error as Error).message, 200)}`, tone: 'error' });
          });
      }
    },
    [engine, onQuit],
  );

  const dispatch = useCallback(
    (action: Action) => {
      const { state: s, ctx: c } = latest.current;
      const step = reduce(s, action, c);
      latest.current = { state: step.state, ctx: c };
      setState(step.state);
      runEffect(step.effect);
    },
    [runEffect],
  );

  // New rows (a snapshot, the filter, a resize): keep the cursor on its finding.
  useEffect(() => dispatch({ type: 'rows' }), [rows, bodyHeight, dispatch]);

  useInput((input, key) => {
    const mode = latest.current.state.mode;
    if (mode === 'evicting') return; // one bulk eviction at a time; progress is on screen
    if (mode === 'filter' && !key.ctrl) {
      if (key.escape) return dispatch({ type: 'command', command: 'filter.clear' });
      if (key.return) return dispatch({ type: 'filter.accept' });
      if (key.backspace || key.delete) return dispatch({ type: 'filter.backspace' });
      if (input && !key.upArrow && !key.downArrow && !key.tab) return dispatch({ type: 'filter.type', text: sanitize(input, 64) });
      return;
    }
    const command = commandFor({ ...key, input }, mode);
    if (command) dispatch({ type: 'command', command });
  });

  if (width < MIN_COLUMNS || size.rows < MIN_ROWS) {
    return <Text>{fit(`ghostwatch: pane too small (${width}x${size.rows}); need ${MIN_COLUMNS}x${MIN_ROWS}. q quits.`, Math.max(1, width))}</Text>;
  }

  let body;
  if (overlay) body = <Panel lines={overlay} scroll={state.detailScroll} height={bodyHeight + 1} width={width} />;
  else if (state.confirm && (state.mode === 'confirm' || state.mode === 'confirm-force' || state.mode === 'evicting')) {
    body = <Confirm confirm={state.confirm} force={state.mode === 'confirm-force'} height={bodyHeight + 1} width={width} sources={snap.sources} />;
  } else {
    body = (
      <>
        <TitleLine placed={placed} width={width} sortColumn={state.sortColumn} sortReverse={state.sortReverse} />
        <Table
          rows={rows}
          placed={placed}
          top={state.top}
          height={bodyHeight}
          cursor={state.cursor}
          marks={state.marks}
          ctx={tableCtx}
          width={width}
          sortColumn={state.sortColumn}
          sortReverse={state.sortReverse}
          empty={emptyText(snap, state)}
        />
      </>
    );
  }

  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Header snap={snap} width={width} height={headerLines} now={tickNow} />
      <Box flexDirection="column" height={bodyHeight + 1} flexShrink={0} overflow="hidden">
        {body}
      </Box>
      {/* One line each, whatever Yoga measures for their text: a wrap must never steal a row from the table. */}
      <Box height={1} flexShrink={0} overflow="hidden">
        <StatusLine state={state} progress={progress} rowCount={rows.length} snap={snap} width={width} now={tickNow} />
      </Box>
      <Box height={1} flexShrink={0} overflow="hidden">
        <Footer mode={state.mode === 'filter' ? 'table' : state.mode} width={width} readOnly={readOnly} />
      </Box>
    </Box>
  );
}

function emptyText(snap: EngineSnapshot, s: ViewState): string {
  if (!snap.settled) return 'waiting for the registry and the first probe...';
  if (s.filter) return `nothing matches "${s.filter}" (Esc clears the filter)`;
  // A registry that is not read has nothing to say about its sessions: never "no sessions".
  const down = snap.sources.filter((x) => STATUS_TRAITS[x.status].error);
  const why = down.map((x) => `${sanitize(x.name, 20)}: ${x.cause ?? x.lastError ?? STATUS_WORDS_SHORT[x.status] ?? x.status}`).join('; ');
  if (down.length > 0 && down.length === snap.sources.length) return `not connected (${why})`;
  const none = s.problemsOnly ? 'no problems (p shows every row)' : s.tab === 'claims' ? 'no claims' : 'no sessions';
  return down.length > 0 ? `${none} in what was read; not connected: ${why}` : none;
}

const STATUS_WORDS_SHORT: Partial<Record<string, string>> = { connecting: 'still connecting', stopped: 'stopped' };

function summaryText(s: EvictSummary): { text: string; tone: 'info' | 'warn' | 'error' } {
  const c = s.counts;
  const parts = [`evicted ${c.evicted}`];
  if (c['already-gone']) parts.push(`${c['already-gone']} already gone`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  if (c.refused) parts.push(`${c.refused} refused`);
  if (c.failed) parts.push(`${c.failed} failed`);
  const firstProblem = s.results.find((r) => r.outcome === 'skipped' || r.outcome === 'refused' || r.outcome === 'failed');
  const why = firstProblem ? ` (${sanitize(firstProblem.finding.id, 24)}: ${firstProblem.detail ?? firstProblem.outcome})` : '';
  const tone = c.failed || c.refused ? 'error' : c.skipped ? 'warn' : 'info';
  return { text: parts.join(', ') + why, tone };
}

function StatusLine(props: { state: ViewState; progress: EvictProgress | undefined; rowCount: number; snap: ReturnType<typeof useEngineSnapshot>; width: number; now: number }) {
  const { state, progress, rowCount, snap, width, now } = props;
  if (state.mode === 'filter') return <Text color="blue">{fit(`/${state.filter}_   Enter keeps it, Esc clears it`, width)}</Text>;
  if (progress) {
    const f = progress.finding;
    return <Text color="yellow">{fit(`evicting ${progress.index}/${progress.total}: ${f.verdict} ${sanitize(f.id, 40)}: ${progress.phase}${progress.detail ? ` (${progress.detail})` : ''}`, width)}</Text>;
  }
  if (state.message) {
    const color = state.message.tone === 'error' ? 'red' : state.message.tone === 'warn' ? 'yellow' : 'green';
    return <Text color={color}>{fit(state.message.text, width)}</Text>;
  }
  const broken = snap.sources.find((s) => STATUS_TRAITS[s.status].error && (s.lastError || s.cause));
  if (broken) {
    // What is shown of it is the last known: say how many rows, and that they wait for the registry.
    const stale = snap.findings.filter((f) => staleOf(f)?.source === broken.name);
    const kept = stale.length > 0 ? `; its ${stale.length} row${stale.length === 1 ? ' is' : 's are'} the last known (~, ${formatAge(now - staleOf(stale[0]!)!.since)} old), not evictable until it reconnects` : '';
    return <Text color="red">{fit(`${sanitize(broken.name, 20)}: ${broken.lastError ?? broken.cause}${kept}`, width)}</Text>;
  }
  const bits = [`${rowCount} ${state.tab === 'sessions' ? 'sessions' : 'claims'}`, `${snap.problems} problems`];
  if (state.marks.size) bits.push(`${state.marks.size} marked`);
  if (state.filter) bits.push(`filter "${state.filter}"`);
  if (state.problemsOnly) bits.push('problems only');
  if (state.sortColumn) bits.push(`sorted by ${state.sortColumn}${state.sortReverse ? ' (reversed)' : ''}`);
  if (snap.os.processTable === 'unavailable' && snap.os.processTableError) bits.push(snap.os.processTableError);
  if (snap.os.notices?.length) bits.push(snap.os.notices[0]!);
  // With several sources their warnings are on their state lines; with one, here.
  const warned = snap.sources.length === 1 ? snap.sources[0]!.warnings : undefined;
  if (warned?.length) bits.push(`${sanitize(snap.sources[0]!.name, 20)} warning: ${warned[0]}${warned.length > 1 ? ` (+${warned.length - 1} more)` : ''}`);
  return <Text color="gray">{fit(bits.join('  |  '), width)}</Text>;
}
