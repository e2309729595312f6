// The probe a remote host runs: a POSIX `sh` loop sent as the command of one long-lived `ssh`
// (nothing is installed there), and the strict parser of what it answers. One request a line on
// stdin, one answer a line on stdout, in order, so requests can be pipelined:
//
//   P <pid>…  →  P <pid> ok|EPERM <state> <cpu> <rss> <start>  (one line per pid asked, in order)
//                P <pid> ok|EPERM - -                        (alive, its state and start unreadable)
//                P <pid> ESRCH
//                P <pid> error <text>
//   L <port>… →  L <port> yes|no|unknown                   (something listens on the TCP port; one line per port)
//   K <pid>…  →  K <one letter per pid>                     (kill -0 only: o ok, s ESRCH, p EPERM, e error)
//   W <pid>…  →  W ok                                       (starts a watcher of these pids, see below)
//   V <port>… →  V ok                                       (starts a watcher of these ports)
//   W         →  W ok                                       (stops every watcher)
//   H         →  H <hostname>
//   Q         →  (the loop exits)
//   other     →  ! refused                                  (one line for the whole request: each argument
//                                                            must be 1-10 digits, at most MAX_BATCH of them)
//
// A watcher is a background subshell of the loop that pushes lines on its own, between answers:
// `+P …` and `+L …`, the shapes of P and L answers behind a `+` (no answer starts with one). It
// pushes its first full reading of every pid or port, then a line only when what reconcile can
// see changes: a pid watcher runs kill -0 every 0.5 s (`sleep 1` where `sleep 0.5` fails) and
// reads state and start time every 4 s, pushing when the kill result, zombie or stopped or
// neither, or the start time differs (never for CPU time or memory alone: a pushed line carries
// them as read, but they ride on the full reads); a port watcher reads the listeners every 2 s. An idle host
// sends nothing, so the engine arms the watchers once per target change and polls P and L only
// as a slow net (the eviction re-probe is always a fresh P request). Each pushed line is one write far below
// PIPE_BUF, so lines never interleave. Watchers end with the loop: it stops them on exit (stdin
// closed, Q, HUP/TERM), signalling only pids that are still its own children, and each checks
// every round that the loop still runs (`kill -0 $$`), so a SIGKILLed loop leaves no watcher
// behind (only a `sleep` of at most 2 s).
// A round of the engine is one request line per host, not one per pid: 100 pids cost one write,
// one wake-up of ssh on each side and one read, and the L batch reads /proc/net/tcp once with one awk.
// The first line is the handshake: `ghostwatch-probe 1 proc btime=<s> clk=<ticks/s> page=<bytes>
// now=<s>` on Linux (start = /proc/PID/stat field 22, in clock ticks since boot; cpu = fields 14 +
// 15, user + system time in clock ticks; rss = field 24, in pages; `getconf` says the tick and the
// page, else 100 and 4096 as the local probe takes them), `ghostwatch-probe 1 ps now=<s>` elsewhere
// (from one `ps -o stat=,time=,rss=,lstart=`: cpu = ps's time, "[[dd-]hh:]mm:ss[.cc]"; rss in KiB;
// start = lstart read in UTC). cpu and rss are each `-` when unreadable. (Linux cpu is added in the shell
// only when each field has at most 9 digits: the sum then fits a 32-bit shell's arithmetic, as
// busybox sh may have; a process past ~115 days of CPU at 100 ticks a second reads `-`.) They are what the process
// costs, read at each full read: a watcher never pushes for them alone (its CPU time moves at every
// reading). Everything the remote prints is untrusted: the parser accepts only these shapes, and
// any other text comes back sanitized; a figure of the right shape past 2^53 is no reading.
import type { KillResult } from '../core/types.js';
import { sanitize } from '../core/sanitize.js';
import { parsePsTime } from './liveness.js';

export const REMOTE_PROBE_VERSION = 1;
/** Pids or ports in one request line, at most (a K answer is then ~130 characters, a P batch as many lines). */
export const MAX_BATCH = 100;

/** The remote program. Kept small: it is sent once per connection, as ssh's command line. (`@{` stands
 * for the shell's `${`, which a template literal would take for its own.) */
export const REMOTE_PROBE_PROGRAM = String.raw`export LC_ALL=C TZ=UTC0
set -f
if [ "$(uname -s)" = Linux ] && [ -r /proc/self/stat ]; then
m=proc
b=$(awk '$1=="btime"{print $2}' /proc/stat 2>/dev/null)
c=$(getconf CLK_TCK 2>/dev/null)
case $c in ''|0*|*[!0-9]*) c=100;; esac
g=$( (getconf PAGESIZE || getconf PAGE_SIZE) 2>/dev/null)
case $g in ''|0*|*[!0-9]*) g=4096;; esac
echo "ghostwatch-probe 1 proc btime=$b clk=$c page=$g now=$(date +%s)"
else
m=ps
echo "ghostwatch-probe 1 ps now=$(date +%s)"
fi
pp() {
if kill -0 "$1" 2>/dev/null; then k=ok; else
e=$(kill -0 "$1" 2>&1)
case $e in
*"No such process"*) o="P $1 ESRCH"; z=s; return;;
*"not permitted"*) k=EPERM;;
*) if ps -p "$1" >/dev/null 2>&1; then k=EPERM; else
o="P $1 error $(printf %s "$e" | tr -s '\r\n\t' '   ' | cut -c1-160)"; z=e; return; fi;;
esac
fi
if [ $m = proc ]; then
s=
read -r s </proc/$1/stat 2>/dev/null
r=@{s##*)}
set -- $1 $r
if [ $# -ge 21 ]; then
case $2 in Z*) y=Z;; [Tt]*) y=T;; *) y=-;; esac
d='- -'
if [ $# -ge 23 ]; then cu=-; case @{13}:@{14} in *[!0-9:]*|0[0-9]*|*:0[0-9]*) ;; *)
[ @{#13} -le 9 ] && [ @{#14} -le 9 ] && cu=$((@{13}+@{14}));; esac; d="$cu @{23}"; fi
o="P $1 $k $2 $d @{21}"; z="$k $y @{21}"
else o="P $1 $k - -"; z="$k -"; fi
else
p=$1
o=$(ps -o stat=,time=,rss=,lstart= -p "$1" 2>/dev/null | head -n 1)
set -- $o
if [ $# -gt 3 ]; then
case $1 in Z*) y=Z;; [Tt]*) y=T;; *) y=-;; esac
t="$1 $2 $3"; shift 3; o="P $p $k $t $*"; z="$k $y $*"
else o="P $p $k - -"; z="$k -"; fi
fi
}
lp() {
if [ $m = proc ]; then
f=
for x in /proc/net/tcp /proc/net/tcp6; do [ -r $x ] && f="$f $x"; done
[ -n "$f" ] || return 1
s=" $(awk 'FNR>1&&$4=="0A"{h=substr($2,index($2,":")+1);n=0;for(i=1;i<=length(h);i++)n=n*16+index("0123456789ABCDEF",substr(h,i,1))-1;printf "%d ",n}' $f) "
elif command -v netstat >/dev/null 2>&1; then
s=" $(netstat -an -p tcp 2>/dev/null | awk '$NF=="LISTEN"{n=split($4,a,/[.:]/);printf "%s ",a[n]}') "
else return 1; fi
}
pa() {
if [ -n "$u" ]; then a=unknown; else case $s in *" $1 "*) a=yes;; *) a=no;; esac; fi
}
pl() {
if lp; then u=; else u=1; fi
for x; do pa "$x"; echo "L $x $a"; done
}
pk() {
r=
for x; do
if kill -0 "$x" 2>/dev/null; then r=@{r}o; else
e=$(kill -0 "$x" 2>&1)
case $e in *"No such process"*) r=@{r}s;; *"not permitted"*) r=@{r}p;; *) r=@{r}e;; esac
fi
done
echo "K $r"
}
sl() {
sleep "$1" </dev/null >/dev/null 2>&1 || sleep 1 </dev/null >/dev/null 2>&1
}
wp() {
n=0
while kill -0 $$ 2>/dev/null; do
for x; do
if [ $((n % 8)) -ne 0 ]; then
eval "j=\${k$x-}"
[ "$j" = o ] || continue
kill -0 "$x" 2>/dev/null && continue
fi
pp "$x"
case $z in ok*) eval "k$x=o";; *) eval "k$x=-";; esac
eval "[ \"\$z\" = \"\${q$x-}\" ]" || { eval "q$x=\$z"; printf '+%s\n' "$o"; }
done
n=$((n+1))
sl 0.5
done
}
wl() {
while kill -0 $$ 2>/dev/null; do
if lp; then u=; else u=1; fi
for x; do
pa "$x"
eval "[ \"\$a\" = \"\${l$x-}\" ]" || { eval "l$x=\$a"; echo "+L $x $a"; }
done
sl 2
done
}
sw() {
for p in $w; do [ "$(ps -o ppid= -p $p 2>/dev/null | tr -d ' ')" = "$$" ] && kill $p 2>/dev/null; done
w=
}
w=
trap sw EXIT
trap 'exit 1' HUP INT TERM PIPE
while IFS= read -r l; do
v=@{l%% *}
a=@{l#"$v"}
a=@{a# }
case $v in
H) [ -z "$a" ] && { printf 'H %s\n' "$( (hostname || uname -n) 2>/dev/null | head -n 1)"; continue; };;
W) [ -z "$a" ] && { sw; echo 'W ok'; continue; };;
Q) exit 0;;
esac
case $a in ''|' '*|*' '|*'  '*|*[!0-9' ']*) echo '! refused'; continue;; esac
set -- $a
n=$#
for x; do case $x in 0*|???????????*) n=0;; esac; case $v in L|V) [ $n -gt 0 ] && [ "$x" -gt 65535 ] && n=0;; esac; done
if [ $n -lt 1 ] || [ $n -gt MAXBATCH ]; then echo '! refused'; continue; fi
case $v in
P) for x; do pp "$x"; printf '%s\n' "$o"; done;;
L) pl "$@";;
K) pk "$@";;
W) wp "$@" & w="$w $!"; echo 'W ok';;
V) wl "$@" & w="$w $!"; echo 'V ok';;
*) echo '! refused';;
esac
done
`.replace(/@\{/g, '${').replace('MAXBATCH', String(MAX_BATCH));

/** The remote's facts about its own clock and how it reads start times. */
export interface Handshake {
  readonly version: number;
  readonly mode: 'proc' | 'ps';
  readonly btimeSec?: number | undefined;
  readonly clkTck?: number | undefined;
  /** Bytes of a memory page (proc mode): resident memory is read in pages. */
  readonly pageBytes?: number | undefined;
  /** The remote's clock when it started, epoch seconds. */
  readonly remoteNowSec: number;
}

export type RemoteAnswer =
  | {
      readonly kind: 'pid';
      readonly pid: number;
      readonly kill: KillResult;
      readonly error?: string | undefined;
      readonly state?: string | undefined;
      /** Start time on the REMOTE clock, epoch ms. */
      readonly startedAt?: number | undefined;
      /** The start as the host wrote it ("tick 4242", "Mon Jan  1 10:00:00 2024"), to name it when it is no time. */
      readonly startText?: string | undefined;
      /** CPU time the process has used so far, user + system, ms; undefined when unreadable. */
      readonly cpuMs?: number | undefined;
      /** Resident memory, bytes; undefined when unreadable. */
      readonly rssBytes?: number | undefined;
      /** Alive, but its state and start time could not be read. */
      readonly detailsHidden?: boolean | undefined;
    }
  | { readonly kind: 'port'; readonly port: number; readonly listening: 'yes' | 'no' | 'unknown' }
  /** A K answer: the kill -0 result of each pid asked, in order. */
  | { readonly kind: 'kills'; readonly results: readonly KillResult[] }
  | { readonly kind: 'host'; readonly name: string }
  /** A W or V answer: the watcher is armed (or, for a bare W, every watcher stopped). */
  | { readonly kind: 'watch'; readonly verb: 'W' | 'V' }
  | { readonly kind: 'refused' }
  /** Not one of the shapes: the line, sanitized, for the error message. */
  | { readonly kind: 'invalid'; readonly text: string };

/** Past this an answer line is not one of ours (the longest real one is ~200 characters). */
export const MAX_ANSWER_LENGTH = 1024;

const DIGITS = /^[1-9][0-9]{0,9}$/;
const KILLS = /^[ospe]+$/;
const KILL_LETTERS = { o: 'ok', s: 'ESRCH', p: 'EPERM', e: 'error' } as const;
const HANDSHAKE = /^ghostwatch-probe (\d{1,3}) (proc|ps)((?: [a-z]+=[0-9]*)*)$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `ps -o lstart=` in the C locale: "Mon Jan  1 10:00:00 2024" (spaces collapsed by the loop). */
const LSTART = /^[A-Z][a-z]{2} ([A-Z][a-z]{2}) (\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;
const STATE = /^[A-Za-z][A-Za-z0-9+<>._-]{0,15}$/;
/** A host name as `hostname` prints it: letters, digits, dots, dashes, underscores. */
const HOST_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,252}$/;

function invalid(line: string): RemoteAnswer {
  return { kind: 'invalid', text: sanitize(line, 120) };
}

/** The first line the remote prints, or undefined when it is not a ghostwatch probe of a known version. */
export function parseHandshake(line: string): Handshake | undefined {
  if (line.length > MAX_ANSWER_LENGTH) return undefined;
  const m = HANDSHAKE.exec(line);
  if (!m) return undefined;
  const version = Number(m[1]);
  if (version !== REMOTE_PROBE_VERSION) return undefined;
  const fields = new Map<string, number>();
  for (const pair of (m[3] ?? '').trim().split(' ')) {
    if (pair === '') continue;
    const [key = '', value = ''] = pair.split('=');
    if (value !== '' && value.length <= 15) fields.set(key, Number(value));
  }
  const remoteNowSec = fields.get('now');
  if (remoteNowSec === undefined) return undefined;
  const mode = m[2] === 'proc' ? 'proc' : 'ps';
  const btimeSec = fields.get('btime');
  const clkTck = fields.get('clk');
  const pageBytes = fields.get('page');
  if (mode === 'proc' && (btimeSec === undefined || clkTck === undefined || clkTck <= 0)) return undefined;
  if (pageBytes !== undefined && pageBytes <= 0) return undefined;
  return { version, mode, btimeSec, clkTck, pageBytes: mode === 'proc' ? pageBytes : undefined, remoteNowSec };
}

function parseStart(words: readonly string[], hs: Handshake): number | undefined {
  if (hs.mode === 'proc') {
    const [ticks] = words;
    if (words.length !== 1 || ticks === undefined || !/^[0-9]{1,18}$/.test(ticks)) return undefined;
    // parseHandshake guarantees both for proc mode.
    return (hs.btimeSec ?? 0) * 1000 + Math.round((Number(ticks) * 1000) / (hs.clkTck ?? 100));
  }
  const m = LSTART.exec(words.join(' '));
  if (!m) return undefined;
  const [, mon = '', day, hh, mm, ss, year] = m;
  const month = MONTHS.indexOf(mon);
  if (month < 0) return undefined;
  return Date.UTC(Number(year), month, Number(day), Number(hh), Number(mm), Number(ss));
}

/** A whole count as the remote writes it: `0`, or digits with no leading zero (at most 16). */
const COUNT = /^(?:0|[1-9][0-9]{0,15})$/;
/** ps's CPU time, "[[dd-]hh:]mm:ss[.cc]", at most this long (parsePsTime reads it). */
const MAX_PS_TIME_LENGTH = 24;
/** A figure malformed: the whole line is not one of ours. */
const MALFORMED = Symbol('malformed');

/** A figure past 2^53 is no reading (a hostile or broken host), though of the right shape. */
function bounded(n: number): number | undefined {
  return Number.isFinite(n) && n >= 0 && n <= Number.MAX_SAFE_INTEGER ? n : undefined;
}

/** The CPU time word of a P answer as ms: `-` unreadable, else clock ticks (proc) or ps's time (ps). */
function parseCpu(word: string | undefined, hs: Handshake): number | undefined | typeof MALFORMED {
  if (word === '-') return undefined;
  if (word === undefined) return MALFORMED;
  if (hs.mode === 'proc') return COUNT.test(word) ? bounded((Number(word) * 1000) / (hs.clkTck ?? 100)) : MALFORMED;
  const ms = word.length <= MAX_PS_TIME_LENGTH ? parsePsTime(word) : undefined;
  return ms === undefined ? MALFORMED : bounded(ms);
}

/** The resident memory word of a P answer as bytes: `-` unreadable, else pages (proc; unknown without the page size) or KiB (ps). */
function parseRss(word: string | undefined, hs: Handshake): number | undefined | typeof MALFORMED {
  if (word === '-') return undefined;
  if (word === undefined || !COUNT.test(word)) return MALFORMED;
  if (hs.mode === 'ps') return bounded(Number(word) * 1024);
  return hs.pageBytes === undefined ? undefined : bounded(Number(word) * hs.pageBytes);
}

/** One answer line, strictly: anything but the shapes above is `invalid`, with the line sanitized. */
export function parseAnswer(line: string, hs: Handshake): RemoteAnswer {
  if (line.length > MAX_ANSWER_LENGTH) return invalid(line);
  if (line === '! refused') return { kind: 'refused' };
  const words = line.split(' ');
  const [verb, arg, ...rest] = words;
  if (verb === 'K') {
    if (words.length !== 2 || arg === undefined || !KILLS.test(arg) || arg.length > MAX_BATCH) return invalid(line);
    return { kind: 'kills', results: [...arg].map((c) => KILL_LETTERS[c as keyof typeof KILL_LETTERS]) };
  }
  if ((verb === 'W' || verb === 'V') && words.length === 2 && arg === 'ok') return { kind: 'watch', verb };
  if (verb === 'H') {
    const name = line.slice(2);
    return words.length === 2 && HOST_NAME.test(name) ? { kind: 'host', name } : invalid(line);
  }
  if (arg === undefined || !DIGITS.test(arg)) return invalid(line);
  const n = Number(arg);
  if (verb === 'L') {
    const [what] = rest;
    if (rest.length !== 1 || n > 65_535 || (what !== 'yes' && what !== 'no' && what !== 'unknown')) return invalid(line);
    return { kind: 'port', port: n, listening: what };
  }
  if (verb !== 'P') return invalid(line);
  const [kill, ...details] = rest;
  if (kill === 'ESRCH') return details.length === 0 ? { kind: 'pid', pid: n, kill: 'ESRCH' } : invalid(line);
  if (kill === 'error') return { kind: 'pid', pid: n, kill: 'error', error: sanitize(details.join(' ') || 'kill -0 failed', 160) };
  if (kill !== 'ok' && kill !== 'EPERM') return invalid(line);
  if (details.length === 2 && details[0] === '-' && details[1] === '-') return { kind: 'pid', pid: n, kill, detailsHidden: true };
  const [state, cpu, rss, ...start] = details;
  if (state === undefined || !STATE.test(state)) return invalid(line);
  const cpuMs = parseCpu(cpu, hs);
  const rssBytes = parseRss(rss, hs);
  if (cpuMs === MALFORMED || rssBytes === MALFORMED) return invalid(line);
  const startedAt = parseStart(start, hs);
  if (startedAt === undefined) return invalid(line);
  const startText = hs.mode === 'proc' ? `tick ${start[0]}` : start.join(' ');
  return { kind: 'pid', pid: n, kill, state: state.charAt(0), startedAt, startText, cpuMs, rssBytes };
}

/**
 * A line a watcher pushed (`+P …` or `+L …`, the shapes of P and L answers behind a `+`): the
 * answer it carries, or `invalid`. Ordinary answers never start with `+`, so the two cannot be confused.
 */
export function parsePush(line: string, hs: Handshake): RemoteAnswer {
  if (line.length > MAX_ANSWER_LENGTH || !/^\+[PL] /.test(line)) return invalid(line);
  const answer = parseAnswer(line.slice(1), hs);
  return answer.kind === 'pid' || answer.kind === 'port' ? answer : invalid(line);
}
