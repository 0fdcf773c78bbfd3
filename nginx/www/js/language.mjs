// The page's language: the one picked in the settings (kept in the browser; not about the station, so it
// outlives a sign-out), else the first of the browser's languages the page speaks. The words themselves are
// in i18n.mjs and its string tables.

import { LANGUAGES, pickLanguage, setLanguage, t, translateDocument } from "./i18n.mjs";

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
