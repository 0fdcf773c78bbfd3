// Small DOM helpers every screen uses: the element of an id, a <time> in the user's locale, a list item that
// never breaks its list, and a part of the page drawn on its own. No state here.

import { formatDate } from "./i18n.mjs";

/** The element with `id`. */
export const $ = (id) => document.getElementById(id);

/** Says `text` to screen readers (the page's polite live region). */
export function announce(text) {
  $("announce").textContent = text;
}

/** A <time> for epoch ms in the user's locale: the time today, else the date and time. */
export function timeElement(ms) {
  const element = document.createElement("time");
  const date = new Date(ms);
  if (!Number.isFinite(date.getTime())) {
    element.textContent = "?";
    return element;
  }
  element.dateTime = date.toISOString();
  const today = new Date();
  element.textContent =
    date.toDateString() === today.toDateString()
      ? formatDate(ms, { hour: "2-digit", minute: "2-digit" })
      : formatDate(ms, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  return element;
}

/** Runs one part of the page's rendering; a failure is logged and the other parts still show. */
export function safely(part) {
  try {
    part();
  } catch (error) {
    console.warn("a part of the page could not be shown:", error);
  }
}

/**
 * One list item built by `build`, or, when that throws (an entry no rule foresaw), the entry as a plain text
 * line, and the failure logged: one entry never takes the list, the page or the sync loop down with it.
 */
export function safeItem(build, entry, tag = "li") {
  try {
    return build();
  } catch (error) {
    console.warn("an entry could not be shown as it is:", error, entry);
    const item = document.createElement(tag);
    item.className = "plain-entry";
    let text;
    try {
      text = `${String(entry?.peer ?? "?").slice(0, 64)}: ${String(entry?.text ?? entry?.last?.text ?? "").slice(0, 500)}`;
    } catch {
      text = "?";
    }
    item.textContent = text;
    return item;
  }
}

/** Clears the error shown under a form field (`<field>-error`) and its `aria-invalid`. */
export function clearFieldError(field) {
  $(`${field}-error`).textContent = "";
  $(field).removeAttribute("aria-invalid");
}
