/** A progress line on stderr: redrawn in place on a terminal, a line every few seconds otherwise (logs, CI). */

/** Reports progress of a long task. */
export interface Progress {
  update(done: number, total: number | null, extra?: string): void;
  finish(message: string): void;
}

function fmtBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

/** A progress reporter for a byte-measured task such as reading a file. */
export function byteProgress(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = Boolean(stream.isTTY);
  const started = Date.now();
  let last = 0;
  return {
    update(done, total, extra) {
      const now = Date.now();
      if (now - last < (tty ? 100 : 2000)) return;
      last = now;
      const pct = total ? ` ${((done / total) * 100).toFixed(1).padStart(5)}%` : "";
      const secs = (now - started) / 1000;
      const rate = secs > 0 ? ` ${fmtBytes(done / secs)}/s` : "";
      const line = `${label}${pct} ${fmtBytes(done)}${total ? ` of ${fmtBytes(total)}` : ""}${rate}${extra ? ` · ${extra}` : ""}`;
      stream.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
    },
    finish(message) {
      stream.write(tty ? `\r\x1b[2K${message}\n` : `${message}\n`);
    },
  };
}
