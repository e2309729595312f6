// The monitor screen. It renders the engine's snapshot and the view state; it owns no data.
// Frame: header, column titles, rows, a status line, the footer — never taller than the pane.
import { Box, Text, useStdout } from 'ink';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { findingKey } from '../core/evict-plan.js';
import type { Finding } from '../core/types.js';
import { sanitize } from '../core/sanitize.js';
import { leftoversOf, type Engine, type EvictProgress } from '../engine/types.js';
import { DEFAULT_KILL_GRACE_MS, leftoverSummaryText } from '../engine/end-leftovers.js';
import { leftoverConfirmLines } from './leftover-dialog.js';
import { columnNeeds, columnsFor, layoutColumns, paneOfRow, samePlacement, type CellContext, type PlacedColumn } from './columns.js';
import { guardedLines, PartBoundary } from './components/boundary.js';
import { Confirm, confirmLines, confirmView, wrapConfirm, type ConfirmLine } from './components/confirm.js';
import { EventsPane } from './components/events.js';
import { Footer, type FooterNeed } from './components/footer.js';
import { Header, headerHeight, headerSourceLines, headerTicks, type AbsentRegistry } from './components/header.js';
import { Panel, wrapLines } from './components/panel.js';
import { emptyText, MESSAGE_MS, StatusLine, summaryText } from './components/status-line.js';
import { Table, TitleLine } from './components/table.js';
import { detailLines, type DetailLine } from './detail.js';
import { eventLines, type EventLine } from './events.js';
import { nextAgeChange } from './ages.js';
import { helpLines } from './help.js';
import { useEngineSnapshot, useExpiry, useMinuteClock, usePacedState, useSecondTicks, useTimerAt, useTerminalSize, type Size } from './hooks.js';
import { rowShorteners, type RowShorteners } from './ids.js';
import { wrapText } from './text.js';
import { copyToClipboard } from './terminal.js';
import { useKeymap } from './use-keymap.js';
import { useTableRows } from './use-table-rows.js';
import { fromKept, initialViewState, keptOf, modeOf, type KeptView, overlayScroll, reduce, type Action, type Effect, type ScreenFacts, type ViewState } from './view-state.js';

export interface AppProps {
  readonly engine: Engine;
  readonly readOnly?: boolean;
  readonly home?: string | undefined;
  readonly now?: () => number;
  /** A fixed size instead of the terminal's (tests, screenshots). */
  readonly size?: Size;
  readonly onQuit: () => void;
  readonly initialState?: Partial<ViewState>;
  /** The sort, problems-only and tab of the last run, and where to keep them when they change. */
  readonly kept?: KeptView | undefined;
  readonly onKeep?: ((kept: KeptView) => void) | undefined;
  /** No registry named: the ones looked for on this host and not there (the header names them). */
  readonly absent?: readonly AbsentRegistry[] | undefined;
  /** Running inside tmux ($TMUX): its prefix key (Ctrl-B) never reaches us, and the help says the keys that do. */
  readonly inTmux?: boolean | undefined;
  /** K: how long SIGTERM gets before SIGKILL, as the dialog says it (the engine's). */
  readonly killGraceMs?: number | undefined;
}

/** A row's id and a claim's holder as the table's cutters read them. */
const shownId = (f: Finding): string => sanitize(f.id, 128);
const shownHolder = (f: Finding): string => sanitize((f.kind === 'claim' ? f.holder : undefined) ?? '-', 128);

/** A part whose lines could not be made: its one error line, in each part's shape. */
const overlayError = (text: string): DetailLine[] => [{ label: text, value: '', heading: true }];
const eventsError = (text: string): { title: string; lines: EventLine[] } => ({ title: text, lines: [] });
const dialogError = (text: string): { head: ConfirmLine[]; list: ConfirmLine[] } => ({ head: [{ text, tone: 'problem' }], list: [] });

/** Smallest pane the table is drawn in; below it, one line says so. */
export const MIN_COLUMNS = 40;
export const MIN_ROWS = 6;
/** Titles, status line, footer; the header's height comes on top. */
const CHROME = 3;

export function App({ engine, readOnly = false, home, now = Date.now, size: fixedSize, onQuit, initialState, kept, onKeep, absent, inTmux = false, killGraceMs = DEFAULT_KILL_GRACE_MS }: AppProps) {
  const snap = useEngineSnapshot(engine);
  const size = useTerminalSize(fixedSize);
  const { stdout } = useStdout();
  const minute = useMinuteClock(now);
  const [state, setState] = useState<ViewState>(() => ({ ...initialViewState, ...(kept ? fromKept(kept) : {}), ...initialState }));
  // One step per entry and phase: drawn at most ~30 times a second, however fast the run goes.
  const [progress, setProgressSoon, setProgress] = usePacedState<EvictProgress | undefined>(undefined);

  // One spare line: a frame as tall as the pane makes Ink clear the whole screen on each change.
  const height = size.rows - 1;
  const width = size.columns;
  const headerLines = headerHeight(headerSourceLines(snap.sources, absent), size.rows);
  // The SOURCE column is there when rows can come from more than one registry: with none named, the ones found.
  const sourceCount = absent ? snap.sources.filter((s) => s.status !== 'absent').length : snap.sources.length;
  const bodyHeight = Math.max(1, height - CHROME - headerLines);

  // Every snapshot has new source states; the offsets (and so the cells' context) change far less often.
  const offsetsText = snap.sources.map((s) => `${s.name}\u0000${s.clockOffsetMs}`).join('\u0000');
  const clockOffsetMs = useMemo(() => Object.fromEntries(snap.sources.map((s) => [s.name, s.clockOffsetMs])), [offsetsText]);
  // The registries' rows, and those of agents gone from them whose leftovers still run.
  const findings = useMemo(() => (snap.departed && snap.departed.length > 0 ? [...snap.findings, ...snap.departed] : snap.findings), [snap.findings, snap.departed]);
  const withLeftovers = useMemo(() => findings.some((f) => (leftoversOf(f)?.length ?? 0) > 0), [findings]);
  // Sort keys do not move with the clock (an age sorts by its origin): the rows need no "now".
  const sortCtx: CellContext = useMemo(() => ({ now: 0, home, clockOffsetMs, panes: snap.panes }), [home, clockOffsetMs, snap.panes]);
  const rows = useTableRows(findings, state, sortCtx);
  const columns = useMemo(() => columnsFor(state.tab, snap.panes, sourceCount, withLeftovers), [state.tab, snap.panes, sourceCount, withLeftovers]);
  // Ids cut so that the rows on screen tell apart (UUIDv7 ids share their start): chosen from those
  // rows, not all 37,000, which a flood of registrations would have listed again on every snapshot.
  const shorteners = useRef<RowShorteners | undefined>(undefined);
  const shownRows = useMemo(() => rows.slice(state.top, state.top + bodyHeight), [rows, state.top, bodyHeight]);
  const cut = useMemo(() => (shorteners.current = rowShorteners(shownRows, shownId, shownHolder, shorteners.current)), [shownRows]);
  const mode = modeOf(state);
  // The ages shown (AGE, a stale row's "stale 3m"): read at the clock when the rows shown change,
  // and again at the next moment one of them reads differently (ages.ts), by one timer. An idle
  // table is redrawn only then, and Ink writes nothing for a frame that did not change.
  const [ageTick, setAgeTick] = useState(0);
  // Read again for new rows shown (a snapshot, a scroll), the view coming back (mode), the timer.
  const ageNow = useMemo(() => now(), [now, shownRows, mode, ageTick]);
  const nextAge = useMemo(() => (mode === 'table' || mode === 'filter' ? nextAgeChange(shownRows, { clockOffsetMs }, ageNow) : undefined), [mode, shownRows, clockOffsetMs, ageNow]);
  useTimerAt(nextAge, now, useCallback(() => setAgeTick((t) => t + 1), []));
  const ctxCells: CellContext = useMemo(() => ({ now: ageNow, home, clockOffsetMs, panes: snap.panes }), [ageNow, home, clockOffsetMs, snap.panes]);
  // What the cells on screen need: the spare width goes to the columns that would cut them. Only
  // the rows shown are measured (10,000 rows take 150 ms; a page, well under one).
  const needs = useMemo(() => columnNeeds(columns, shownRows, ctxCells), [columns, shownRows, ctxCells]);
  // The sorted column is always shown, its mark with it; `<` `>` go through the columns this width shows.
  // The same placement keeps its identity, so a scroll by one row re-renders only the new row.
  const placedBefore = useRef<PlacedColumn[] | undefined>(undefined);
  const placed = useMemo(() => {
    const next = layoutColumns(columns, width, { needs, keep: state.sortColumn });
    const before = placedBefore.current;
    return (placedBefore.current = before !== undefined && samePlacement(before, next) ? before : next);
  }, [columns, width, needs, state.sortColumn]);
  const sortable = useMemo(() => layoutColumns(columns, width).map((p) => p.column.id), [columns, width]);
  const tableCtx: CellContext = useMemo(() => ({ ...ctxCells, shortId: cut.shortId, shortHolder: cut.shortHolder }), [ctxCells, cut]);
  const detailFinding = mode === 'detail' ? findings.find((f) => findingKey(f) === state.detailKey) : undefined;
  // Ages in the detail view and a retry countdown in the header tick; nothing else does.
  const tickNow = useSecondTicks((mode === 'detail' && detailFinding !== undefined) || headerTicks(snap.sources), now);
  const overlay = useMemo(() => {
    if (mode === 'help') return guardedLines('help', () => wrapLines(helpLines({ inTmux }), width), overlayError);
    if (mode === 'detail' && detailFinding) {
      return guardedLines(
        'detail view',
        () => {
          const pid = detailFinding.entry.pid;
          // The engine knows this host's processes only: pid 5123 of another host is not pid 5123 here.
          const local = detailFinding.evidence.host.local;
          const lines = detailLines(
            detailFinding,
            tickNow,
            local && typeof pid === 'number' ? engine.processInfo(pid) : undefined,
            clockOffsetMs[detailFinding.source],
            paneOfRow(detailFinding, snap.panes),
            engine.lastChecked(detailFinding),
            snap.sources.find((s) => s.name === detailFinding.source)?.url,
            readOnly,
          );
          return wrapLines(lines, width);
        },
        overlayError,
      );
    }
    return undefined;
  }, [mode, detailFinding, engine, tickNow, clockOffsetMs, snap.panes, snap.sources, width, inTmux, readOnly]);
  const events = useMemo(() => (mode === 'events' ? guardedLines('events', () => eventLines(snap.events, minute, snap.settled), eventsError) : undefined), [mode, snap.events, snap.settled, minute]);

  const dialog = state.confirm && (mode === 'confirm' || mode === 'confirm-force' || mode === 'evicting' || mode === 'cancelling') ? state.confirm : undefined;
  const leftoverDialog = state.leftoverConfirm && (mode === 'confirm-leftovers' || mode === 'ending') ? state.leftoverConfirm : undefined;
  const dialogLines = useMemo(() => {
    if (leftoverDialog) return guardedLines('dialog', () => wrapConfirm(leftoverConfirmLines(leftoverDialog.targets, killGraceMs, mode === 'ending'), width), dialogError);
    return dialog ? guardedLines('dialog', () => wrapConfirm(confirmLines(dialog, mode === 'confirm-force', snap.sources, home), width), dialogError) : undefined;
  }, [dialog, leftoverDialog, killGraceMs, mode, snap.sources, home, width]);
  const dialogRoom = dialogLines ? confirmView(dialogLines, bodyHeight + 1, 0).listRoom : undefined;

  const facts: ScreenFacts = {
    rows,
    all: findings,
    pageSize: bodyHeight,
    readOnly,
    overlayLines: dialogLines ? dialogLines.list.length : (overlay?.length ?? events?.lines.length ?? 0),
    ...(dialogRoom !== undefined ? { overlayPage: dialogRoom } : {}),
    panes: snap.panes,
    sourceCount,
    sortable,
    withLeftovers,
  };
  // New rows (a snapshot, the filter, a resize): the cursor stays on its finding in the frame that
  // shows them. Worked out while rendering, so React renders again before anything is drawn; an
  // effect would draw one frame with the cursor on whatever row took its place (and a key typed
  // in between would act on that row).
  const [anchoredTo, setAnchoredTo] = useState<{ rows: readonly Finding[]; bodyHeight: number } | undefined>(undefined);
  if (anchoredTo?.rows !== rows || anchoredTo.bodyHeight !== bodyHeight) {
    setAnchoredTo({ rows, bodyHeight });
    const anchored = reduce(state, { type: 'rows' }, facts).state;
    if (anchored !== state) setState(anchored);
  }
  const latest = useRef({ state, facts });
  latest.current = { state, facts };

  // The running eviction's cancel: Esc or Ctrl-C stop it after the entry being sent.
  const cancelRun = useRef<AbortController | undefined>(undefined);
  const runEffect = useCallback(
    (effect: Effect | undefined) => {
      if (!effect) return;
      if (effect.type === 'quit') onQuit();
      else if (effect.type === 'cancel') cancelRun.current?.abort();
      else if (effect.type === 'refresh') {
        void engine.refresh().then(() => dispatch({ type: 'message', text: 'refreshed', tone: 'info' }));
      } else if (effect.type === 'jump') {
        const jump = engine.jumpToPane?.(effect.pid) ?? Promise.resolve({ ok: false, text: 'tmux panes cannot be switched to from here' });
        void jump.then(
          (r) => dispatch({ type: 'message', text: sanitize(r.text, 200), tone: r.ok ? 'info' : 'warn' }),
          (error: unknown) => dispatch({ type: 'message', text: `cannot switch pane: ${sanitize((error as Error).message, 160)}`, tone: 'error' }),
        );
      } else if (effect.type === 'copy') {
        const copied = copyToClipboard(stdout, effect.text);
        dispatch(
          copied
            ? { type: 'message', text: `copied ${effect.text} (OSC 52)`, tone: 'info' }
            : { type: 'message', text: 'cannot copy: the output is not an interactive terminal', tone: 'warn' },
        );
      } else if (effect.type === 'end-leftovers') {
        const cancel = new AbortController();
        cancelRun.current = cancel;
        const end = engine.endLeftovers;
        if (!end) {
          dispatch({ type: 'ended', text: 'processes cannot be signalled from here', tone: 'warn' });
          return;
        }
        const onProgress = (p: { phase: string; left: number; graceMs: number }): void => {
          const text = p.phase === 'waiting' ? `SIGTERM sent; ${p.left} still running, SIGKILL after ${Math.round(p.graceMs / 100) / 10} s` : p.phase === 'kill' ? `sending SIGKILL to ${p.left} still running` : 'sending SIGTERM';
          dispatch({ type: 'message', text, tone: 'info' });
        };
        void end
          .call(engine, { selection: effect.selection, onProgress, signal: cancel.signal })
          .then((summary) => {
            cancelRun.current = undefined;
            dispatch({ type: 'ended', ...leftoverSummaryText(summary) });
          })
          .catch((error: unknown) => {
            cancelRun.current = undefined;
            dispatch({ type: 'ended', text: `ending leftovers stopped: ${sanitize((error as Error).message, 200)}`, tone: 'error' });
          });
      } else {
        const cancel = new AbortController();
        cancelRun.current = cancel;
        void engine
          .evict({ selection: effect.selection, force: effect.force, onProgress: setProgressSoon, signal: cancel.signal })
          .then((summary) => {
            cancelRun.current = undefined;
            setProgress(undefined);
            dispatch({ type: 'evicted', ...summaryText(summary) });
          })
          .catch((error: unknown) => {
            cancelRun.current = undefined;
            setProgress(undefined);
            dispatch({ type: 'evicted', text: `eviction stopped: ${sanitize((error as Error).message, 200)}`, tone: 'error' });
          });
      }
    },
    [engine, onQuit, stdout],
  );

  const dispatch = useCallback(
    (action: Action) => {
      const { state: s, facts: f } = latest.current;
      const next = reduce(s, action, f);
      latest.current = { state: next.state, facts: f };
      setState(next.state);
      runEffect(next.effect);
    },
    [runEffect],
  );

  // A message goes after MESSAGE_MS (a newer one restarts the wait).
  const expireMessage = useCallback((message: ViewState['message']) => dispatch({ type: 'message-expired', message }), [dispatch]);
  useExpiry(state.message, MESSAGE_MS, expireMessage);

  useKeymap(() => modeOf(latest.current.state), dispatch);

  // A changed sort, direction, problems-only or tab is kept for the next run (not the first render's).
  const keptNow = useRef(keptOf(state));
  useEffect(() => {
    const next = keptOf(state);
    const prev = keptNow.current;
    if (next.tab === prev.tab && next.sortColumn === prev.sortColumn && next.sortReverse === prev.sortReverse && next.problemsOnly === prev.problemsOnly) return;
    keptNow.current = next;
    onKeep?.(next);
  }, [state, onKeep]);

  if (width < MIN_COLUMNS || size.rows < MIN_ROWS) return <TooSmall columns={width} rows={size.rows} />;

  // What the footer offers first: ending leftovers or evicting, when that is what the row (or the marks) wants.
  const underCursor = mode === 'detail' ? detailFinding : mode === 'table' ? rows[state.cursor] : undefined;
  const footerNeed: FooterNeed = {
    evict: (mode === 'table' && state.marks.size > 0) || (underCursor?.problem === true && underCursor.evictable),
    leftovers: underCursor !== undefined && (leftoversOf(underCursor)?.length ?? 0) > 0,
    noRows: mode === 'table' && rows.length === 0,
  };

  // Each part behind its own boundary: a part that throws is one error line, tried again at the
  // next frame; the keys and the other parts go on.
  let body;
  if (overlay) {
    body = (
      <PartBoundary part={mode === 'help' ? 'help' : 'detail view'} width={width}>
        <Panel lines={overlay} scroll={overlayScroll(state)} height={bodyHeight + 1} width={width} />
      </PartBoundary>
    );
  } else if (events) {
    body = (
      <PartBoundary part="events" width={width}>
        <EventsPane title={events.title} lines={events.lines} scroll={overlayScroll(state)} height={bodyHeight + 1} width={width} />
      </PartBoundary>
    );
  } else if (dialog || leftoverDialog) {
    body = (
      <PartBoundary part="dialog" width={width}>
        <Confirm all={dialogLines!} height={bodyHeight + 1} width={width} scroll={state.confirmScroll} />
      </PartBoundary>
    );
  } else {
    body = (
      <PartBoundary part="table" width={width}>
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
          empty={emptyText(snap, state, absent)}
        />
      </PartBoundary>
    );
  }

  return (
    <Box flexDirection="column" height={height} width={width} overflowY="hidden">
      <PartBoundary part="header" width={width}>
        <Header snap={snap} width={width} height={headerLines} now={tickNow} readOnly={readOnly} absent={absent} />
      </PartBoundary>
      <Box flexDirection="column" height={bodyHeight + 1} flexShrink={0} overflowY="hidden">
        {body}
      </Box>
      {/* One line each, whatever Yoga measures for their text: a wrap must never steal a row from the table. */}
      <Box height={1} flexShrink={0} overflowY="hidden">
        <PartBoundary part="status line" width={width}>
          <StatusLine state={state} progress={progress} rowCount={rows.length} snap={snap} width={width} now={tickNow} />
        </PartBoundary>
      </Box>
      <Box height={1} flexShrink={0} overflowY="hidden">
        <PartBoundary part="footer" width={width}>
          <Footer mode={mode} width={width} readOnly={readOnly} need={footerNeed} />
        </PartBoundary>
      </Box>
    </Box>
  );
}

/**
 * Below the smallest pane the table is drawn in: what it needs, wrapped to the pane (never cut),
 * the most needed first when even that does not fit in its height.
 */
function TooSmall({ columns, rows }: Size) {
  const said = [`ghostwatch needs ${MIN_COLUMNS}x${MIN_ROWS}`, `this pane: ${columns}x${rows}`, 'q quits'];
  const lines = said.flatMap((l) => wrapText(l, Math.max(1, columns), '')).slice(0, Math.max(1, rows - 1));
  return (
    <Box flexDirection="column">
      {lines.map((l, i) => (
        <Text key={i}>{l}</Text>
      ))}
    </Box>
  );
}
