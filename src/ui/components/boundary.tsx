// No part of the screen takes the monitor down with it. A part (the header, the table, the detail
// view, a dialog, the events, the status line) that throws while it is drawn shows the error in
// one line in its place; the rest of the screen, the keys and the updates go on, and the part is
// tried again the next time the screen is drawn (a key, a snapshot, a tick). Should the screen
// itself throw, one line says so, q still quits, and it is tried again at the next snapshot.
import { Text } from 'ink';
import { Component, type ReactNode } from 'react';
import { sanitize } from '../../core/sanitize.js';
import type { Engine } from '../../engine/types.js';
import { fit } from '../text.js';
import { TONE_COLOR } from '../theme.js';
import { useKeymap } from '../use-keymap.js';

/** "detail view could not be drawn: Invalid time value": the error as one inert line, whatever was thrown. */
export function partErrorText(part: string, error: unknown): string {
  const message = error instanceof Error && typeof error.message === 'string' ? error.message : error;
  return `${part} could not be drawn: ${sanitize(message, 200)}`;
}

function ErrorLine({ text, width }: { text: string; width: number }) {
  return <Text color={TONE_COLOR.problem}>{fit(text, Math.max(1, width))}</Text>;
}

interface PartProps {
  /** What the error line calls the part ("table", "detail view"). */
  readonly part: string;
  readonly width: number;
  readonly children?: ReactNode;
}

interface PartState {
  readonly failed: boolean;
  readonly error: unknown;
  /** The props the part was last drawn (or failed) with: new props, a new try. */
  readonly props: PartProps;
}

export class PartBoundary extends Component<PartProps, PartState> {
  override state: PartState = { failed: false, error: undefined, props: this.props };

  static getDerivedStateFromError(error: unknown): Partial<PartState> {
    return { failed: true, error };
  }

  // The screen drew again (new props): try the part again. Its own re-render after a failure keeps
  // the same props, so a part that throws is one error line, not a loop.
  static getDerivedStateFromProps(props: PartProps, state: PartState): Partial<PartState> | null {
    return props === state.props ? null : { failed: false, error: undefined, props };
  }

  override render(): ReactNode {
    return this.state.failed ? <ErrorLine text={partErrorText(this.props.part, this.state.error)} width={this.props.width} /> : this.props.children;
  }
}

/**
 * The lines App computes for a part (the detail view's, the dialog's: their count drives the
 * scroll, so they are made in App's own render, where no boundary below it can catch): the error
 * as the part's one line instead of a throw.
 */
export function guardedLines<T>(part: string, make: () => T, errorLine: (text: string) => T): T {
  try {
    return make();
  } catch (error) {
    return errorLine(partErrorText(part, error));
  }
}

interface ScreenProps {
  readonly engine: Pick<Engine, 'subscribe'>;
  readonly onQuit: () => void;
  readonly width: () => number;
  readonly children?: ReactNode;
}

interface ScreenState {
  readonly failed: boolean;
  readonly error: unknown;
}

/** Around the whole screen: the last line of defence when App's own render throws. */
export class ScreenBoundary extends Component<ScreenProps, ScreenState> {
  override state: ScreenState = { failed: false, error: undefined };
  private unsubscribe: (() => void) | undefined;

  static getDerivedStateFromError(error: unknown): Partial<ScreenState> {
    return { failed: true, error };
  }

  override componentDidMount(): void {
    // A new snapshot: the screen is tried again (its view state starts afresh; the kept sort stays).
    this.unsubscribe = this.props.engine.subscribe(() => {
      if (this.state.failed) this.setState({ failed: false, error: undefined });
    });
  }

  override componentWillUnmount(): void {
    this.unsubscribe?.();
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    return <ScreenError text={`${partErrorText('screen', this.state.error)}; q quits`} width={this.props.width()} onQuit={this.props.onQuit} />;
  }
}

/** The failed screen's one line; its keys are the keymap's, in the table's mode: q and Ctrl-C quit. */
function ScreenError({ text, width, onQuit }: { text: string; width: number; onQuit: () => void }) {
  useKeymap(
    () => 'table',
    (action) => {
      if (action.type === 'command' && action.command === 'app.quit') onQuit();
    },
  );
  return <ErrorLine text={text} width={width} />;
}
