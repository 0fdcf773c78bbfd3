// Sending a message (docs/protocol.md "Sending messages"): whether this server has /v1/send, and the send
// itself with a `clientId` that a retry of the same text to the same station reuses, so it never goes out twice.

/** Whether /v1/send exists (`state.send`): the server's feature list, or (without /v1/info) a probe with an empty body. */
export async function loadSendSupport(context) {
  const { state } = context;
  if (state.info) {
    state.send = context.features().includes("send") ? "yes" : "no";
    return;
  }
  try {
    await context.api.call("send", {});
    state.send = "yes";
  } catch (error) {
    if (error.network) state.send = "unknown";
    else state.send = error.status === 404 ? "no" : "yes";
  }
}

/**
 * Sends `text` to the station `to` (an address) and merges the sent entry into the inbox; throws the APIError.
 * The same text to the same station after a failure is a retry: same clientId.
 */
export async function sendMessage(context, to, text) {
  const { state } = context;
  if (!state.sending || state.sending.to !== to || state.sending.text !== text) {
    state.sending = { clientId: newClientId(), to, text };
  }
  try {
    const answer = await context.call("send", { to, text, clientId: state.sending.clientId });
    state.sending = null;
    state.inbox.merge([answer.message]);
  } catch (error) {
    // An older server without /v1/info, found to have no /v1/send after all.
    if (error.status === 404 && state.info === null && /no such endpoint/i.test(error.message)) {
      state.send = "no";
      context.render();
    }
    throw error;
  }
}

function newClientId() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
