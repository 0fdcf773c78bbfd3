// The page's words: one string table per language (js/lang/<code>.mjs, every table with every key of the
// English one; Tests/webclient/test_logic.mjs fails on a missing key), the language chosen from the
// browser's languages unless the user picked one in the settings, and dates and numbers in the user's locale.
// `{name}` in a string is replaced by `vars.name`; plural forms are keys ending in `.one`, `.other` (and any
// other category Intl.PluralRules names for the language).
//
// Pure apart from the language picked (kept in the browser's storage; not about the station, so it outlives a
// sign-out), `applyLanguage`, `translateDocument` and `fillLanguageSelect` (the DOM): the Node tests import it as
// it is.

import de from "./lang/de.mjs";
import en from "./lang/en.mjs";

/** Every language the page speaks: code → {name (in itself), table}. */
export const LANGUAGES = new Map([
  ["en", { name: "English", table: en }],
  ["de", { name: "Deutsch", table: de }],
]);

let current = "en";
let currentLocale = "en";

/**
 * The language for a list of BCP 47 tags (navigator.languages, most wanted first): `{language, locale}`, the
 * first tag whose primary language the page speaks (`de-AT` → German, dates as in Austria); English otherwise,
 * with dates in the first tag's locale.
 */
export function pickLanguage(tags) {
  const list = Array.isArray(tags) ? tags.filter((tag) => typeof tag === "string" && tag !== "") : [];
  for (const tag of list) {
    const primary = tag.toLowerCase().split("-")[0];
    if (LANGUAGES.has(primary)) return { language: primary, locale: validLocale(tag) ?? primary };
  }
  return { language: "en", locale: validLocale(list[0]) ?? "en" };
}

function validLocale(tag) {
  try {
    return typeof tag === "string" ? Intl.getCanonicalLocales(tag)[0] ?? null : null;
  } catch {
    return null;
  }
}

/** Switches the language (a code of LANGUAGES; anything else is English) and the locale of dates. */
export function setLanguage(language, locale = language) {
  current = LANGUAGES.has(language) ? language : "en";
  currentLocale = validLocale(locale) ?? current;
}

/** The language in use ("en", "de"). */
export function language() {
  return current;
}

/** The locale dates and numbers are written in. */
export function locale() {
  return currentLocale;
}

/** The text of `key` in the language in use (English where a table lacks it; the key itself if none has it). */
export function t(key, vars) {
  const table = LANGUAGES.get(current).table;
  const text = Object.hasOwn(table, key) ? table[key] : Object.hasOwn(en, key) ? en[key] : key;
  return vars ? fill(text, vars) : text;
}

/** The plural form of `key` for `count` (`{count}` in it is the number, written in the locale). */
export function tn(key, count, vars = {}) {
  let category = "other";
  try {
    category = new Intl.PluralRules(currentLocale).select(count);
  } catch {
    // A locale Intl does not know: "other".
  }
  const table = LANGUAGES.get(current).table;
  const wanted = `${key}.${category}`;
  const chosen = Object.hasOwn(table, wanted) || Object.hasOwn(en, wanted) ? wanted : `${key}.other`;
  return t(chosen, { count: formatNumber(count), ...vars });
}

function fill(text, vars) {
  return text.replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(vars, name) ? String(vars[name]) : whole));
}

/** A number as the locale writes it. */
export function formatNumber(value) {
  try {
    return new Intl.NumberFormat(currentLocale).format(value);
  } catch {
    return String(value);
  }
}

/** A date and time (epoch ms) as the locale writes it: `{dateStyle, timeStyle}` as Intl takes them. */
export function formatDate(ms, options = { dateStyle: "medium", timeStyle: "short" }) {
  const date = new Date(ms);
  if (!Number.isFinite(date.getTime())) return "?";
  try {
    return new Intl.DateTimeFormat(currentLocale, options).format(date);
  } catch {
    return date.toISOString();
  }
}

/**
 * Writes the language into the page: an element's `data-i18n` (a key) sets its text, its `data-i18n-attr`
 * (comma-separated `attribute:key` pairs) its attributes, and `<html lang>` follows.
 */
export function translateDocument(root = globalThis.document) {
  root.documentElement.lang = current;
  for (const element of root.querySelectorAll("[data-i18n]")) {
    element.textContent = t(element.dataset.i18n);
  }
  for (const element of root.querySelectorAll("[data-i18n-attr]")) {
    for (const pair of element.dataset.i18nAttr.split(",")) {
      const [attribute, key] = pair.split(":");
      if (attribute && key) element.setAttribute(attribute.trim(), t(key.trim()));
    }
  }
}

/** The language picked in the settings. */
const STORE_LANGUAGE = "aprs-cloud-language";

/** The language picked in the settings ("en", "de"), or null: the browser's. */
export function pickedLanguage() {
  try {
    const picked = localStorage.getItem(STORE_LANGUAGE);
    return LANGUAGES.has(picked) ? picked : null;
  } catch {
    return null;
  }
}

/** Keeps the language picked (a code of LANGUAGES; anything else: the browser's again). */
export function keepLanguage(value) {
  try {
    if (LANGUAGES.has(value)) localStorage.setItem(STORE_LANGUAGE, value);
    else localStorage.removeItem(STORE_LANGUAGE);
  } catch {
    // Not kept: this visit still switches.
  }
}

/** Switches to the language in use now and writes it into the page's fixed text (`data-i18n`). */
export function applyLanguage() {
  const browser = pickLanguage(navigator.languages ?? [navigator.language]);
  const picked = pickedLanguage();
  // The user's own locale for dates when it is of the language picked (de-AT stays de-AT), else the language.
  if (picked && picked !== browser.language) setLanguage(picked, picked);
  else setLanguage(browser.language, browser.locale);
  translateDocument(document);
}

/** Fills a language picker: "automatic" (the browser's) and each language in its own name, the picked one chosen. */
export function fillLanguageSelect(select) {
  const options = [["", t("settings.languageAuto")], ...[...LANGUAGES].map(([code, { name }]) => [code, name])];
  select.replaceChildren(
    ...options.map(([value, name]) => {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = name;
      if (value !== "") option.lang = value;
      return option;
    }),
  );
  select.value = pickedLanguage() ?? "";
}
