// What every screen of the page is (screens/*.mjs: sign-in, inbox, conversation, subscriptions, settings, and
// the top bar shown above the signed-in ones). Each module exports one class that extends Screen and has
// exactly this interface; app.mjs makes one of each at boot and drives them, nothing else calls them:
//
//   constructor(context)  Finds its elements, binds their events, once. `context` is the page's one shared
//                         object (app.mjs): `state` (everything the page knows), `api`, `call(name, fields,
//                         options)` (an API call with the station's identity), `features()`, `owner()` (this
//                         browser holds the station key) and `actions` (what a screen may ask of the page:
//                         signIn, signOut, proveClaim, send, postRead, updateSettings, enableNotifications,
//                         disableNotifications, changeLanguage, keyChanged, render). A screen keeps no state
//                         of the page's; it changes it through `actions` (or the models' own methods) and
//                         reads it back in update().
//   show(params)          The route now shows this screen. `params`: the route (`{view, peer}`), `previous`
//                         (the route before), `focus` (move the focus into the screen, as a route change by
//                         the user does), and what a screen takes besides (the sign-in screen: `message`,
//                         `keyLink`).
//   hide()                Another screen shows instead (or, for the top bar and the signed-in screens, the
//                         station signed out).
//   update()              Draws what `context.state` holds now. Called on every change the page sees: for
//                         the sign-in screen while signed out, for the others while signed in, shown or not
//                         (the inbox and a conversation stand side by side on a wide screen). Cheap and
//                         idempotent; it never moves the focus.
//   retranslate()         The language changed: says again what update() does not redraw (text a screen
//                         wrote once, the language pickers). update() follows at once.
//
// Which elements a screen owns: the ones inside its section of index.html (the top bar: the header and the
// tabs). The words come from the string tables (i18n.mjs), as everywhere.

export class Screen {
  /** @param {object} context the page's shared state and actions (see above) */
  constructor(context) {
    this.context = context;
  }

  get state() {
    return this.context.state;
  }

  get actions() {
    return this.context.actions;
  }

  // eslint-disable-next-line no-unused-vars
  show(params) {}

  hide() {}

  update() {}

  retranslate() {}
}

/** The members every screen has (the Node tests check each module against it). */
export const SCREEN_INTERFACE = ["show", "hide", "update", "retranslate"];
