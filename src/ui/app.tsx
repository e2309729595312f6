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
import { columnsFor, layoutColumns, paneOfRow, type CellContext } from './columns.js';
import { guardedLines, PartBoundary } from './components/boundary.js';
import { Confirm, confirmLines, confirmView, wrapConfirm, type ConfirmLine } from './components/confirm.js';
import { EventsPane } from './components/events.js';
import { Footer, type FooterNeed } from './components/footer.js';
import { Header, headerHeight, headerSourceLines, headerTicks, type AbsentRegistry } from './components/header.js';
import { Panel, wrapLines } from './components/panel.js';
import { emptyText, StatusLine, summaryText } from './components/status-line.js';
import { Table, TitleLine } from './components/table.js';
import { detailLines, helpLines, type DetailLine } from './detail.js';
import { eventLines, type EventLine } from './events.js';
import { useEngineSnapshot, useMinuteClock, useSecondTicks, useTerminalSize, type Size } from './hooks.js';
import { rowShorteners, type RowShorteners } from './ids.js';
import { visibleRows } from './rows.js';
import { fit } from './text.js';
import { copyToClipboard } from './terminal.js';
import { useKeymap } from './use-keymap.js';
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

export function App({ engine, readOnly = false, home, now = Date.now, size: fixedSize, onQuit, initialState, kept, onKeep, absent, killGraceMs = DEFAULT_KILL_GRACE_MS }: AppProps) {
  const snap = useEngineSnapshot(engine);
  const size = useTerminalSize(fixedSize);
  const { stdout } = useStdout();
  const minute = useMinuteClock(now);
  const [state, setState] = useState<ViewState>(() => ({ ...initialViewState, ...(kept ? fromKept(kept) : {}), ...initialState }));
  const [progress, setProgress] = useState<EvictProgress | undefined>();

  // One spare line: a frame as tall as the pane makes Ink clear the whole screen on each change.
  const height = size.rows - 1;
  const width = size.columns;
  const headerLines = headerHeight(headerSourceLines(snap.sources, absent), size.rows);
  // The SOURCE column is there when rows can come from more than one registry: with none named, the ones found.
  const sourceCount = absent ? snap.sources.filter((s) => s.status !== 'absent').length : snap.sources.length;
  const bodyHeight = Math.max(1, height - CHROME - headerLines);

  const clockOffsetMs = useMemo(() => Object.fromEntries(snap.sources.map((s) => [s.name, s.clockOffsetMs])), [snap.sources]);
  const ctxCells: CellContext = useMemo(() => ({ now: minute, home, clockOffsetMs, panes: snap.panes }), [minute, home, clockOffsetMs, snap.panes]);
  // The registries' rows, and those of agents gone from them whose leftovers still run.
  const findings = useMemo(() => (snap.departed && snap.departed.length > 0 ? [...snap.findings, ...snap.departed] : snap.findings), [snap.findings, snap.departed]);
  const withLeftovers = useMemo(() => findings.some((f) => (leftoversOf(f)?.length ?? 0) > 0), [findings]);
  const rows = useMemo(
    () => visibleRows(findings, state, ctxCells),
    // Sorting by age depends on the clock; everything else only on the findings and the query.
    [findings, state.tab, state.filter, state.problemsOnly, state.sortColumn, state.sortReverse, ctxCells],
  );
  const placed = useMemo(() => layoutColumns(columnsFor(state.tab, snap.panes, sourceCount, withLeftovers), width), [state.tab, width, snap.panes, sourceCount, withLeftovers]);
  // Ids cut so that the rows shown tell apart (UUIDv7 ids share their start).
  const shorteners = useRef<RowShorteners | undefined>(undefined);
  const tableCtx: CellContext = useMemo(() => {
    const cut = (shorteners.current = rowShorteners(rows, shownId, shownHolder, shorteners.current));
    return { ...ctxCells, shortId: cut.shortId, shortHolder: cut.shortHolder };
  }, [ctxCells, rows]);
  const mode = modeOf(state);
  const detailFinding = mode === 'detail' ? findings.find((f) => findingKey(f) === state.detailKey) : undefined;
  // Ages in the detail view and a retry countdown in the header tick; nothing else does.
  const tickNow = useSecondTicks((mode === 'detail' && detailFinding !== undefined) || headerTicks(snap.sources), now);
  const overlay = useMemo(() => {
    if (mode === 'help') return guardedLines('help', () => wrapLines(helpLines(), width), overlayError);
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
          );
          return wrapLines(lines, width);
        },
        overlayError,
      );
    }
    return undefined;
  }, [mode, detailFinding, engine, tickNow, clockOffsetMs, snap.panes, snap.sources, width]);
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
    withLeftovers,
  };
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
          .evict({ selection: effect.selection, force: effect.force, onProgress: setProgress, signal: cancel.signal })
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

  // New rows (a snapshot, the filter, a resize): keep the cursor on its finding.
  useEffect(() => dispatch({ type: 'rows' }), [rows, bodyHeight, dispatch]);

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

  if (width < MIN_COLUMNS || size.rows < MIN_ROWS) {
    return <Text>{fit(`ghostwatch: pane too small (${width}x${size.rows}); need ${MIN_COLUMNS}x${MIN_ROWS}. q quits.`, Math.max(1, width))}</Text>;
  }

  // What the footer offers first: evicting, when that is what the row (or the marks) wants.
  const underCursor = mode === 'detail' ? detailFinding : mode === 'table' ? rows[state.cursor] : undefined;
  const footerNeed: FooterNeed = (mode === 'table' && state.marks.size > 0) || (underCursor?.problem === true && underCursor.evictable) ? 'evict' : undefined;

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
