// The /v1 API as the page calls it: POST with a JSON object, an answer that is a JSON object, and a
// failure whenever the answer carries a non-null `error` (docs/protocol.md, "Errors"): the user then sees
// the server's own `error` text. A body that is not JSON counts as a network failure, as in the app.

/** A failed call. `message` is the server's `error` text when the server sent one. */
export class APIError extends Error {
  /**
   * @param {string} message
   * @param {{status?: number, network?: boolean, aborted?: boolean}} details `status`: the HTTP
   *   status (0 when no answer came); `network`: no usable answer; `aborted`: the caller cancelled.
   */
  constructor(message, { status = 0, network = false, aborted = false } = {}) {
    super(message);
    this.name = "APIError";
    this.status = status;
    this.network = network;
    this.aborted = aborted;
  }
}

/** Milliseconds the app waits for an answer (docs/protocol.md, "Transport"). */
export const DEFAULT_TIMEOUT_MS = 20000;

export class API {
  /**
   * @param {URL|string} base the folder of the API, e.g. `https://host/v1/` (relative to the page, so
   *   a page served under a prefix talks to the API under the same prefix)
   * @param {typeof fetch} fetcher
   */
  constructor(base, fetcher = (...args) => globalThis.fetch(...args)) {
    this.base = new URL(base);
    this.fetcher = fetcher;
    /** The station key of the signed-in station's claim (docs/protocol.md "Owned stations"), sent on every call
     * while set, as `Authorization: Bearer` and as the `stationKey` field (web servers that drop the header,
     * such as Apache's CGI without `CGIPassAuth`, still pass the body); null: none. */
    this.stationKey = null;
  }

  /**
   * `POST <base><name>` with `body`; resolves to the answer object, rejects with an APIError.
   * `signal` cancels (then `aborted` is true); `timeoutMs` bounds the whole call.
   */
  async call(name, body, { signal, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const cancel = () => controller.abort();
    if (signal) {
      if (signal.aborted) controller.abort();
      signal.addEventListener("abort", cancel, { once: true });
    }
    let response;
    let answer;
    try {
      response = await this.fetcher(new URL(name, this.base).href, {
        method: "POST",
        headers: this.stationKey
          ? { "content-type": "application/json", authorization: `Bearer ${this.stationKey}` }
          : { "content-type": "application/json" },
        body: JSON.stringify(this.stationKey ? { ...(body ?? {}), stationKey: this.stationKey } : (body ?? {})),
        cache: "no-store",
        credentials: "omit",
        redirect: "error",
        signal: controller.signal,
      });
      const text = await response.text();
      try {
        answer = JSON.parse(text);
      } catch {
        answer = undefined;
      }
    } catch (error) {
      if (signal?.aborted && !timedOut) {
        throw new APIError("cancelled", { aborted: true, network: true });
      }
      throw new APIError(
        timedOut ? "the server did not answer in time" : "cannot reach the server (offline?)",
        { network: true },
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
    }
    const status = response.status;
    if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
      throw new APIError(`the server sent an answer that is not JSON (HTTP ${status})`, {
        status,
        network: true,
      });
    }
    if (answer.error !== undefined && answer.error !== null) {
      throw new APIError(String(answer.error), { status });
    }
    return answer;
  }
}
