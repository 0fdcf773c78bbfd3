// Keeping the inbox live: one `/v1/sync` at a time from the cursor, forever.
//
// - With long polls (`/v1/info` lists `longpoll`) each sync carries `wait`, and the server holds it
//   until a message commits or the wait runs out; the next one starts at once.
// - Without them, a short sync every `pollMs` (slower while the page is hidden).
// - A server that claims long polls but answers every `wait` at once with nothing (an older responder
//   ignores the key) or refuses `wait` with a 400 makes the loop fall back to short polls.
// - A failure (offline, timeout, 5xx) backs off 1, 2, 4 … 30 s; `kick()` cuts the wait short (the
//   browser came back online, the page became visible, the machine woke from sleep). Every sync starts
//   from the cursor, so nothing is skipped across a drop.
//
// No DOM here: `call` is the API, `sleep` and `now` are injectable, so the Node tests run it.

/** Seconds a long poll asks the server to hold (well under nginx's timeouts and common proxies'). */
export const LONG_POLL_SECONDS = 50;
/** After falling back to short polls because long polls came back empty at once (a server without them, or
 * one whose slots were full or kept giving this station's slot to a newer poll), try long polls again this
 * much later, ms. */
export const LONG_POLL_RETRY_MS = 5 * 60 * 1000;

/** A promise that resolves after `ms`, or as soon as `signal` aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export class LiveSync {
  /**
   * @param {object} options
   * @param {(body: object, options: {signal: AbortSignal, timeoutMs: number}) => Promise<object>} options.call
   *   one `/v1/sync` (identity added by the caller); rejects with an APIError
   * @param {() => number} options.cursor the cursor to send as `since`
   * @param {(answer: object) => void} options.onAnswer a sync's answer (the caller merges it)
   * @param {(error: unknown) => void} [options.onError] an `onAnswer` that threw (logged; the loop goes on)
   * @param {string[]|null} [options.want] the sync's `want` (docs/protocol.md "Opt-in answers"), or null
   * @param {(status: {mode: string, error?: Error, retryMs?: number}) => void} options.onStatus
   *   `mode`: "live" (long poll), "polling" (short polls), "offline" (retrying in `retryMs`),
   *   "stopped" (a 401: the passcode no longer matches)
   * @param {boolean} options.longPoll whether the server said it does long polls
   * @param {number} [options.maxWait] the server's largest `wait` (seconds)
   */
  constructor({
    call,
    cursor,
    onAnswer,
    onStatus = () => {},
    onError = (error) => console.warn("sync: an answer could not be taken in:", error),
    want = null,
    longPoll = false,
    maxWait = 300,
    pollMs = 1000,
    hiddenPollMs = 10000,
    visible = () => true,
    now = () => Date.now(),
    sleeper = sleep,
  }) {
    this.call = call;
    this.cursor = cursor;
    this.onAnswer = onAnswer;
    this.onStatus = onStatus;
    this.onError = onError;
    this.want = want;
    this.longPoll = longPoll;
    this.waitSeconds = Math.max(1, Math.min(LONG_POLL_SECONDS, Number.isFinite(maxWait) ? maxWait : 300));
    this.pollMs = pollMs;
    this.hiddenPollMs = hiddenPollMs;
    this.visible = visible;
    this.now = now;
    this.sleeper = sleeper;
    this.running = false;
    this.request = null;
    this.nap = null;
    this.restart = false;
    this.mode = null;
    this.longPollRetryAt = null;
  }

  start() {
    if (this.running) return;
    this.running = true;
    this.done = this.loop();
  }

  /** Stops at once (an open long poll is cancelled). */
  stop() {
    this.running = false;
    this.request?.abort();
    this.nap?.abort();
  }

  /**
   * Syncs now: ends a pause (poll interval or backoff); with `reconnect`, also cancels an open long
   * poll and starts a new one (its connection may have died while the machine slept or the network
   * changed).
   */
  kick({ reconnect = false } = {}) {
    if (!this.running) return;
    this.nap?.abort();
    if (reconnect && this.request) {
      this.restart = true;
      this.request.abort();
    }
  }

  status(mode, details = {}) {
    this.mode = mode;
    this.onStatus({ mode, ...details });
  }

  async pause(ms) {
    this.nap = new AbortController();
    await this.sleeper(ms, this.nap.signal);
    this.nap = null;
  }

  async loop() {
    let failures = 0;
    let quickEmpty = 0;
    while (this.running) {
      if (!this.longPoll && this.longPollRetryAt !== null && this.now() >= this.longPollRetryAt) {
        this.longPoll = true;
        this.longPollRetryAt = null;
        quickEmpty = 0;
      }
      const wait = this.longPoll ? this.waitSeconds : 0;
      const body = { since: this.cursor() };
      if (wait > 0) body.wait = wait;
      if (this.want) body.want = this.want;
      this.request = new AbortController();
      const started = this.now();
      let answer;
      try {
        answer = await this.call(body, { signal: this.request.signal, timeoutMs: wait * 1000 + 15000 });
      } catch (error) {
        this.request = null;
        if (!this.running) return;
        if (this.restart) {
          this.restart = false;
          continue;
        }
        if (error?.status === 401) {
          this.running = false;
          this.status("stopped", { error });
          return;
        }
        if (error?.status === 400 && wait > 0) {
          // The server does not take `wait` after all.
          this.longPoll = false;
          continue;
        }
        failures += 1;
        const retryMs = Math.min(30000, 1000 * 2 ** Math.min(failures - 1, 5));
        this.status("offline", { error, retryMs });
        await this.pause(retryMs);
        continue;
      }
      this.request = null;
      this.restart = false;
      if (!this.running) return;
      failures = 0;
      // Whatever an answer holds, the loop goes on: a failure to take it in is logged, never the end of sync.
      try {
        this.onAnswer(answer);
      } catch (error) {
        this.onError(error);
      }
      const empty = !Array.isArray(answer?.messages) || answer.messages.length === 0;
      if (answer?.more === true && !empty && this.cursor() > body.since) {
        // A paged answer (`want:["inbox"]`): the rest follows at once from the new cursor.
        this.status(this.longPoll ? "live" : "polling");
        continue;
      }
      if (this.longPoll) {
        if (empty && this.now() - started < 1000) {
          // Answered at once with nothing: this server may ignore `wait`.
          quickEmpty += 1;
          if (quickEmpty >= 3) {
            this.longPoll = false;
            this.longPollRetryAt = this.now() + LONG_POLL_RETRY_MS;
          }
        } else {
          quickEmpty = 0;
        }
      }
      this.status(this.longPoll ? "live" : "polling");
      if (!this.longPoll) {
        await this.pause(this.visible() ? this.pollMs : this.hiddenPollMs);
      } else if (quickEmpty > 0) {
        await this.pause(1000);
      }
    }
  }
}
